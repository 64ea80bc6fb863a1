package fakekafka

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/testcontainers/testcontainers-go"
)

// Module paths: this module, and the fakekafka module whose binary the
// image runs. The two are released together, at the same version.
const (
	modulePath   = "github.com/fakekafka/fakekafka/testcontainers"
	fakekafkaMod = "github.com/fakekafka/fakekafka"
	fakekafkaCmd = fakekafkaMod + "/cmd/fakekafka"
)

// ImageRepository is the repository of the images Image builds: one tag
// per fakekafka version ("fakekafka:v1.2.0").
const ImageRepository = "fakekafka"

// ModuleVersion is the version of this module in the running program,
// which is the fakekafka version Run starts when given no image: from the
// program's build information, or (in a test binary, which has none of
// its dependencies') from where the go command put this module's source,
// $GOMODCACHE/github.com/fakekafka/fakekafka/testcontainers@VERSION (or
// that path with -trimpath). It fails when the module has no version: in
// its own tests, or replaced by a directory.
func ModuleVersion() (string, error) {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, m := range info.Deps {
			if m.Path != modulePath {
				continue
			}
			if m.Replace != nil {
				if m.Replace.Version == "" {
					return "", fmt.Errorf("fakekafka: %s is replaced by %s, with no version: give Run an image (BuildImage builds one from a checkout)", modulePath, m.Replace.Path)
				}
				return m.Replace.Version, nil
			}
			return m.Version, nil
		}
	}
	if v := sourceVersion(); v != "" {
		return v, nil
	}
	return "", fmt.Errorf("fakekafka: %s has no version here (the main module, or replaced by a directory): give Run an image (BuildImage builds one from a checkout)", modulePath)
}

// sourceVersion is the version in the name of the directory this file is
// in, when the go command took it from the module cache: ".../testcontainers@v1.2.0".
func sourceVersion() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return ""
	}
	dir := path.Base(path.Dir(filepath.ToSlash(file)))
	name, v, ok := strings.Cut(dir, "@")
	if !ok || name != path.Base(modulePath) || !strings.HasPrefix(v, "v") {
		return ""
	}
	// The module cache escapes upper-case letters as '!' and the lower-case one.
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '!' && i+1 < len(v) {
			i++
			b.WriteString(strings.ToUpper(v[i : i+1]))
			continue
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

var (
	imageMu    sync.Mutex
	imageLocks = map[string]*sync.Mutex{}
)

// Image returns the tag of the image of fakekafka at version (a module
// version such as "v1.2.0"; "" is ModuleVersion), and builds it first when
// the Docker engine does not have it: the go command builds
// github.com/fakekafka/fakekafka/cmd/fakekafka at that version in a
// temporary module (a static linux binary for the engine's architecture,
// the module fetched through GOPROXY as any dependency), and the Docker
// API builds the FROM scratch image of the module's image/Dockerfile
// around it. Nothing is pulled from an image registry. The image is kept,
// tagged ImageRepository:version, and later calls (and later test runs)
// reuse it. Build output goes to log (nil: discarded).
func Image(ctx context.Context, version string, log io.Writer) (string, error) {
	if version == "" {
		v, err := ModuleVersion()
		if err != nil {
			return "", err
		}
		version = v
	}
	if !strings.HasPrefix(version, "v") || strings.ContainsAny(version, " /:@") {
		return "", fmt.Errorf("fakekafka: Image(%q): want a module version such as v1.2.0", version)
	}
	if log == nil {
		log = io.Discard
	}
	tag := imageTag(version)
	ref := ImageRepository + ":" + tag

	// One build per tag in this process; another process building the same
	// tag at the same time only builds it twice.
	imageMu.Lock()
	l := imageLocks[ref]
	if l == nil {
		l = new(sync.Mutex)
		imageLocks[ref] = l
	}
	imageMu.Unlock()
	l.Lock()
	defer l.Unlock()

	provider, err := testcontainers.NewDockerProvider()
	if err != nil {
		return "", fmt.Errorf("fakekafka: docker: %w", err)
	}
	defer provider.Close()
	if _, err := provider.Client().ImageInspect(ctx, ref); err == nil {
		return ref, nil
	}

	dir, err := os.MkdirTemp("", "fakekafka-image-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	mod, ctxDir := filepath.Join(dir, "module"), filepath.Join(dir, "context")
	for _, d := range []string{mod, ctxDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return "", err
		}
	}
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module fakekafka-image\n"), 0o644); err != nil {
		return "", err
	}
	// The temporary module stands alone: no workspace, and it may add
	// what it needs to its go.mod and go.sum.
	flags := []string{"-mod=mod"}
	for _, f := range strings.Fields(os.Getenv("GOFLAGS")) {
		if !strings.HasPrefix(f, "-mod=") && !strings.HasPrefix(f, "--mod=") {
			flags = append(flags, f)
		}
	}
	env := []string{"GOWORK=off", "GOFLAGS=" + strings.Join(flags, " ")}
	if _, err := goCommand(ctx, mod, env, log, "get", fakekafkaCmd+"@"+moduleQuery(version)); err != nil {
		return "", err
	}
	buildEnv := append(env, "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+engineArch(ctx, provider.Client()))
	if _, err := goCommand(ctx, mod, buildEnv, log, "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(ctxDir, "fakekafka"), fakekafkaCmd); err != nil {
		return "", err
	}
	modDir, err := goCommand(ctx, mod, env, log, "list", "-m", "-f", "{{.Dir}}", fakekafkaMod)
	if err != nil {
		return "", err
	}
	dockerfile := filepath.Join(strings.TrimSpace(modDir), "image", "Dockerfile")
	if err := dockerBuild(ctx, provider, ctxDir, dockerfile, ImageRepository, tag, log); err != nil {
		return "", err
	}
	return ref, nil
}

// pseudoVersion matches a pseudo-version's tail: -TIMESTAMP-REVISION.
var pseudoVersion = regexp.MustCompile(`[-.](\d{14})-([0-9a-f]{12})(\+incompatible)?$`)

// moduleQuery is what to ask the go command for: the version itself, or
// for a pseudo-version (this module at a commit) the commit, at which the
// fakekafka module has a pseudo-version of its own.
func moduleQuery(version string) string {
	if m := pseudoVersion.FindStringSubmatch(version); m != nil {
		return m[2]
	}
	return version
}

// imageTag makes a module version a Docker tag ([A-Za-z0-9_.-], at most
// 128 characters).
func imageTag(version string) string {
	t := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, version)
	if len(t) > 128 {
		t = t[:128]
	}
	return t
}
