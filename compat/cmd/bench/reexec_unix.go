//go:build unix

package main

import (
	"os"
	"strings"
	"syscall"
)

// reexecWithMadvFree runs the command again with GODEBUG=madvdontneed=0
// unless the caller chose a madvdontneed setting: the runtime then returns
// freed heap with MADV_FREE instead of MADV_DONTNEED, so pages it releases
// and reuses stay mapped. On a VM where a page fault costs microseconds,
// re-faulting them would otherwise dominate, and randomise, every
// in-process figure (the first, warm-up run of each workload still pays
// for the heap's first growth). If the exec fails, the run goes on as is.
func reexecWithMadvFree() {
	debug := os.Getenv("GODEBUG")
	if strings.Contains(debug, "madvdontneed=") {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	if debug != "" {
		debug += ","
	}
	env := []string{"GODEBUG=" + debug + "madvdontneed=0"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GODEBUG=") {
			env = append(env, kv)
		}
	}
	syscall.Exec(exe, os.Args, env)
}
