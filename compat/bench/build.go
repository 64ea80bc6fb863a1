package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// builtBinary is a program the bench compiles with the go command once per
// Run, outside every timing, into a temporary directory that remove
// deletes at the end of the Run.
type builtBinary struct {
	goArgs []string // the go command's arguments before -o
	pkg    string
	file   string // the binary's name in its directory
	needs  string // said when the build fails

	once sync.Once
	path string
	err  error
}

var (
	fakekafkaBinary = &builtBinary{goArgs: []string{"build"}, pkg: "github.com/fakekafka/fakekafka/cmd/fakekafka", file: "fakekafka"}
	suiteBinary     = &builtBinary{goArgs: []string{"test", "-c"}, pkg: "github.com/fakekafka/fakekafka/compat/bench/suite", file: "suite.test",
		needs: " (needs the go command and the compat module)"}
)

// build compiles the program the first time and returns its path.
func (b *builtBinary) build(ctx context.Context) (string, error) {
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "fakekafka-bench")
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, b.file)
		args := append(append([]string(nil), b.goArgs...), "-o", b.path, b.pkg)
		if out, err := exec.CommandContext(ctx, "go", args...).CombinedOutput(); err != nil {
			b.err = fmt.Errorf("building %s%s: %v\n%s", b.pkg, b.needs, err, out)
		}
	})
	return b.path, b.err
}

// remove deletes the binary; the next Run compiles it again.
func (b *builtBinary) remove() {
	if b.path != "" {
		os.RemoveAll(filepath.Dir(b.path))
	}
	b.once, b.path, b.err = sync.Once{}, "", nil
}
