//go:build !unix

package storage

import (
	"os"
	"path/filepath"
)

// lockDir only creates DIR/.lock where flock is not available.
func lockDir(dir string) (*os.File, error) {
	return os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
}
