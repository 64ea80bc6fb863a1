// Command modproxy makes a file-based Go module proxy (GOPROXY=file://DIR)
// from this repository's working tree, as if its modules had been released
// at one version: each module's go.mod requires the others at that version
// and has no replace for them (what a release commit does), go.sum has
// their hashes, and the zip follows the go command's module zip rules
// (golang.org/x/mod/zip). scripts/install-check.sh uses it to prove that
// go install and go get work with nothing but the module proxy.
//
//	go run . -repo ../.. -version v0.99.0 -out /tmp/proxy [-modules .,api,testcontainers]
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	"golang.org/x/mod/sumdb/dirhash"
	"golang.org/x/mod/zip"
)

// ours is the prefix of this repository's module paths.
const ours = "github.com/fakekafka/fakekafka"

func main() {
	log.SetFlags(0)
	log.SetPrefix("modproxy: ")
	repo := flag.String("repo", ".", "the repository's root")
	version := flag.String("version", "v0.99.0", "the version to release the modules at")
	out := flag.String("out", "", "the proxy directory to write (GOPROXY=file://DIR)")
	mods := flag.String("modules", "api,.,testcontainers", "the modules to release, as directories in the repository, dependencies first")
	flag.Parse()
	if *out == "" || !semver.IsValid(*version) || semver.Build(*version) != "" {
		log.Fatal("want -out DIR and a -version such as v0.99.0")
	}
	root, err := filepath.Abs(*repo)
	if err != nil {
		log.Fatal(err)
	}
	files, err := gitFiles(root)
	if err != nil {
		log.Fatal(err)
	}
	// go.sum lines of the modules released so far, added to the go.sum of
	// every later module that requires them.
	sums := map[string][]string{}
	for _, dir := range strings.Split(*mods, ",") {
		path, err := release(root, filepath.Clean(dir), *version, *out, files, sums)
		if err != nil {
			log.Fatalf("%s: %v", dir, err)
		}
		fmt.Printf("%s@%s\n", path, *version)
	}
}

// gitFiles lists the repository's files as git sees them (tracked, and
// untracked but not ignored), relative to root with slashes.
func gitFiles(root string) ([]string, error) {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %w", err)
	}
	var files []string
	for f := range strings.SplitSeq(strings.TrimSuffix(string(b), "\x00"), "\x00") {
		if _, err := os.Lstat(filepath.Join(root, f)); err == nil {
			files = append(files, f)
		}
	}
	slices.Sort(files)
	return slices.Compact(files), nil
}

// release writes the module in dir at version to the proxy and returns its
// path.
func release(root, dir, version, out string, files []string, sums map[string][]string) (string, error) {
	modPath := filepath.Join(root, dir, "go.mod")
	data, err := os.ReadFile(modPath)
	if err != nil {
		return "", err
	}
	mf, err := modfile.Parse(modPath, data, nil)
	if err != nil {
		return "", err
	}
	mpath := mf.Module.Mod.Path
	var needed []string
	for _, r := range mf.Require {
		if isOurs(r.Mod.Path) {
			if err := mf.AddRequire(r.Mod.Path, version); err != nil {
				return "", err
			}
			needed = append(needed, r.Mod.Path)
		}
	}
	for _, r := range slices.Clone(mf.Replace) {
		if isOurs(r.Old.Path) {
			if err := mf.DropReplace(r.Old.Path, r.Old.Version); err != nil {
				return "", err
			}
		}
	}
	mf.Cleanup()
	gomod, err := mf.Format()
	if err != nil {
		return "", err
	}
	gosum, _ := os.ReadFile(filepath.Join(root, dir, "go.sum"))
	var lines []string
	for l := range strings.Lines(string(gosum)) {
		if f := strings.Fields(l); len(f) > 0 && !isOurs(f[0]) {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	for _, p := range needed {
		if sums[p] == nil {
			return "", fmt.Errorf("requires %s, not released before it (see -modules)", p)
		}
		lines = append(lines, sums[p]...)
	}
	slices.Sort(lines)
	gosum = []byte(strings.Join(slices.Compact(lines), "\n") + "\n")

	// The module's files: those under dir (zip.Create leaves out those of
	// nested modules and vendor directories), with go.mod and go.sum as
	// rewritten.
	prefix := ""
	if dir != "." {
		prefix = filepath.ToSlash(dir) + "/"
	}
	var zfiles []zip.File
	for _, f := range files {
		rel, ok := strings.CutPrefix(f, prefix)
		if !ok {
			continue
		}
		zf := file{path: rel, disk: filepath.Join(root, filepath.FromSlash(f))}
		switch rel {
		case "go.mod":
			zf.data = gomod
		case "go.sum":
			zf.data = gosum
		}
		zfiles = append(zfiles, zf)
	}
	if !slices.ContainsFunc(zfiles, func(f zip.File) bool { return f.Path() == "go.sum" }) && len(lines) > 0 {
		zfiles = append(zfiles, file{path: "go.sum", data: gosum})
	}

	m := module.Version{Path: mpath, Version: version}
	esc, err := module.EscapePath(mpath)
	if err != nil {
		return "", err
	}
	vdir := filepath.Join(out, filepath.FromSlash(esc), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return "", err
	}
	zipPath := filepath.Join(vdir, version+".zip")
	zw, err := os.Create(zipPath)
	if err != nil {
		return "", err
	}
	if err := zip.Create(zw, m, zfiles); err != nil {
		zw.Close()
		return "", err
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(vdir, version+".mod"), gomod, 0o644); err != nil {
		return "", err
	}
	info, _ := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, time.Now().UTC().Truncate(time.Second)})
	if err := os.WriteFile(filepath.Join(vdir, version+".info"), info, 0o644); err != nil {
		return "", err
	}
	if err := addToList(filepath.Join(vdir, "list"), version); err != nil {
		return "", err
	}

	h, err := dirhash.HashZip(zipPath, dirhash.Hash1)
	if err != nil {
		return "", err
	}
	hm, err := dirhash.Hash1([]string{"go.mod"}, func(string) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(gomod)), nil
	})
	if err != nil {
		return "", err
	}
	sums[mpath] = []string{mpath + " " + version + " " + h, mpath + " " + version + "/go.mod " + hm}
	return mpath, nil
}

func isOurs(p string) bool { return p == ours || strings.HasPrefix(p, ours+"/") }

func addToList(list, version string) error {
	b, _ := os.ReadFile(list)
	versions := strings.Fields(string(b))
	if !slices.Contains(versions, version) {
		versions = append(versions, version)
	}
	semver.Sort(versions)
	return os.WriteFile(list, []byte(strings.Join(versions, "\n")+"\n"), 0o644)
}

// file is a zip.File: a file of the working tree, or data in its place.
type file struct {
	path, disk string
	data       []byte
}

func (f file) Path() string { return f.path }

func (f file) Lstat() (fs.FileInfo, error) {
	if f.data != nil {
		return dataInfo{name: path.Base(f.path), size: int64(len(f.data))}, nil
	}
	return os.Lstat(f.disk)
}

func (f file) Open() (io.ReadCloser, error) {
	if f.data != nil {
		return io.NopCloser(bytes.NewReader(f.data)), nil
	}
	return os.Open(f.disk)
}

type dataInfo struct {
	name string
	size int64
}

func (i dataInfo) Name() string       { return i.name }
func (i dataInfo) Size() int64        { return i.size }
func (i dataInfo) Mode() fs.FileMode  { return 0o644 }
func (i dataInfo) ModTime() time.Time { return time.Time{} }
func (i dataInfo) IsDir() bool        { return false }
func (i dataInfo) Sys() any           { return nil }
