//go:build !unix

package server

import (
	"os"
	"path/filepath"
)

// lockDataDir only creates DIR/.lock where flock is not available.
func lockDataDir(dir string) (*os.File, error) {
	return os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
}
