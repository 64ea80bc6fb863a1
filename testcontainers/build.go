package fakekafka

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

// BuildImage builds the fakekafka image from a checkout of the fakekafka
// repository at repoRoot and tags it (e.g. "fakekafka:dev"): a static
// binary built on the host with the go command (CGO_ENABLED=0, linux, the
// Docker engine's architecture), copied into image/Dockerfile's FROM
// scratch image. Nothing is pulled. The binary is built in workspace mode
// with the checkout's root and api modules (go.mod requires a released api
// version; the checkout's own is the one to build). Build output goes to
// log (nil: discarded).
//
// Without a checkout, Run with no image (or Image) builds the image from
// the fakekafka module version this module was released with.
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
	repoRoot, err := filepath.Abs(repoRoot)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "fakekafka-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctxDir := filepath.Join(dir, "context")
	if err := os.Mkdir(ctxDir, 0o755); err != nil {
		return err
	}
	work, err := checkoutWorkspace(dir, repoRoot)
	if err != nil {
		return err
	}
	provider, err := testcontainers.NewDockerProvider()
	if err != nil {
		return fmt.Errorf("fakekafka: docker: %w", err)
	}
	defer provider.Close()

	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(ctxDir, "fakekafka"), "./cmd/fakekafka")
	build.Dir = repoRoot
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+engineArch(ctx, provider.Client()), "GOWORK="+work)
	build.Stdout, build.Stderr = log, log
	if err := build.Run(); err != nil {
		return fmt.Errorf("fakekafka: go build: %w", err)
	}
	return dockerBuild(ctx, provider, ctxDir, filepath.Join(repoRoot, "image", "Dockerfile"), repo, version, log)
}

// checkoutWorkspace writes a go.work in dir that uses the checkout's root
// module with its api module in place of the required version (and
// nothing else: compat's dependencies are not needed) and returns its path.
func checkoutWorkspace(dir, repoRoot string) (string, error) {
	goVersion := "1.22"
	if mod, err := os.ReadFile(filepath.Join(repoRoot, "go.mod")); err == nil {
		for line := range strings.Lines(string(mod)) {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "go "); ok {
				goVersion = strings.TrimSpace(v)
			}
		}
	}
	work := filepath.Join(dir, "go.work")
	text := fmt.Sprintf("go %s\n\nuse %q\n\nreplace github.com/fakekafka/fakekafka/api => %q\n",
		goVersion, repoRoot, filepath.Join(repoRoot, "api"))
	return work, os.WriteFile(work, []byte(text), 0o644)
}

// dockerBuild builds ctxDir (the binary, already there) with dockerfile
// and an empty data directory into repo:tag through the Docker API.
func dockerBuild(ctx context.Context, provider *testcontainers.DockerProvider, ctxDir, dockerfile, repo, tag string, log io.Writer) error {
	df, err := os.ReadFile(dockerfile)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(ctxDir, "Dockerfile"), df, 0o644); err != nil {
		return err
	}
	// The image's empty /data, where a volume keeps the data dir.
	if err := os.Mkdir(filepath.Join(ctxDir, "data"), 0o755); err != nil {
		return err
	}
	req := &testcontainers.ContainerRequest{FromDockerfile: testcontainers.FromDockerfile{
		Context: ctxDir, Repo: repo, Tag: tag, KeepImage: true, BuildLogWriter: log,
	}}
	if _, err := provider.BuildImage(ctx, req); err != nil {
		return fmt.Errorf("fakekafka: docker build: %w", err)
	}
	return nil
}

// engineArch is the GOARCH of the Docker engine's machine (which is not
// the host's with a remote engine), or the host's when the engine does not
// say.
func engineArch(ctx context.Context, cli client.APIClient) string {
	info, err := cli.Info(ctx, client.InfoOptions{})
	if err != nil {
		return runtime.GOARCH
	}
	switch a := info.Info.Architecture; a {
	case "x86_64", "amd64":
		return "amd64"
	case "aarch64", "arm64":
		return "arm64"
	case "armv7l", "armv6l", "arm":
		return "arm"
	case "i386", "i686", "386":
		return "386"
	case "ppc64le", "s390x", "riscv64", "mips64le", "loong64":
		return a
	}
	return runtime.GOARCH
}

// goCommand runs the go command in dir with env added and returns its
// standard output; its standard error goes to log and into the error.
func goCommand(ctx context.Context, dir string, env []string, log io.Writer, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = io.MultiWriter(&errb, log)
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("fakekafka: go %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}
