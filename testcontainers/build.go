package fakekafka

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/testcontainers/testcontainers-go"
)

// BuildImage builds the fakekafka image from a checkout of the fakekafka
// repository at repoRoot and tags it (e.g. "fakekafka:dev"): a static
// binary built on the host with the go command (CGO_ENABLED=0, linux, the
// Docker engine's architecture taken as the host's), copied into
// image/Dockerfile's FROM scratch image. Nothing is pulled. Build output
// goes to log (nil: discarded).
func BuildImage(ctx context.Context, repoRoot, tag string, log io.Writer) error {
	if log == nil {
		log = io.Discard
	}
	if _, err := os.Stat(filepath.Join(repoRoot, "image", "Dockerfile")); err != nil {
		return fmt.Errorf("fakekafka: %s is not a fakekafka checkout: %w", repoRoot, err)
	}
	repo, version, ok := strings.Cut(tag, ":")
	if !ok || repo == "" || version == "" {
		return fmt.Errorf("fakekafka: image tag %q: want REPOSITORY:TAG", tag)
	}
	dir, err := os.MkdirTemp("", "fakekafka-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(dir, "fakekafka"), "./cmd/fakekafka")
	build.Dir = repoRoot
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH, "GOWORK=off")
	build.Stdout, build.Stderr = log, log
	if err := build.Run(); err != nil {
		return fmt.Errorf("fakekafka: go build: %w", err)
	}
	df, err := os.ReadFile(filepath.Join(repoRoot, "image", "Dockerfile"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), df, 0o644); err != nil {
		return err
	}
	// The image's empty /data, where a volume keeps the data dir.
	if err := os.Mkdir(filepath.Join(dir, "data"), 0o755); err != nil {
		return err
	}

	provider, err := testcontainers.NewDockerProvider()
	if err != nil {
		return fmt.Errorf("fakekafka: docker: %w", err)
	}
	defer provider.Close()
	req := &testcontainers.ContainerRequest{FromDockerfile: testcontainers.FromDockerfile{
		Context: dir, Repo: repo, Tag: version, KeepImage: true, BuildLogWriter: log,
	}}
	if _, err := provider.BuildImage(ctx, req); err != nil {
		return fmt.Errorf("fakekafka: docker build: %w", err)
	}
	return nil
}
