//go:build !unix

package main

func reexecWithMadvFree() {}
