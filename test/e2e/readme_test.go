//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// walkthroughMarker is the HTML comment (invisible on GitHub) that marks a
// README blocks TestREADMEWalkthrough runs: the quick start's, in the
// repository, then the walkthrough's.
const (
	quickStartMarker  = "<!-- quickstart"
	walkthroughMarker = "<!-- walkthrough"
)

// TestREADMEWalkthrough runs README.md's quick start and walkthrough top
// to bottom, as written, as a new user pastes them on a fresh machine: the
// quick start in the repository with nothing of kubesim's on PATH (it must
// put kubesim there itself), then the walkthrough in a directory of their
// own; their own KUBESIM_HOME and KUBECONFIG. kubectl lines run as
// `kubesim kubectl` (a kubectl on PATH that is kubesim's own), as CI
// machines may have none. `make cluster` builds bin/kubesim, as `make
// test` has just done: the build is up to date and only the create runs.
func TestREADMEWalkthrough(t *testing.T) {
	e := newEnv(t)
	quickStart := readmeBlock(t, "../../README.md", quickStartMarker)
	walkthrough := readmeBlock(t, "../../README.md", walkthroughMarker)
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o700); err != nil {
		t.Fatal(err)
	}
	shim := "#!/bin/sh\nexec kubesim kubectl \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "kubectl"), []byte(shim), 0o700); err != nil {
		t.Fatal(err)
	}
	script := "cd " + repo + "\n" + quickStart + "cd " + dir + "\n" + walkthrough
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // make cluster may build
	defer cancel()
	started := time.Now()
	// -e: a failing line fails the walkthrough; -x: says which.
	cmd := exec.CommandContext(ctx, "bash", "-euxo", "pipefail", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(withoutKubesimOnPath(t), "PATH="+bin+":"+pathWithoutKubesim(t), "HOME="+dir,
		"KUBESIM_HOME="+e.home, "KUBECONFIG="+e.kubeconfig)
	// The user's own Go caches, which a new HOME would move: `make cluster`
	// finds bin/kubesim up to date rather than build it anew.
	cmd.Env = append(cmd.Env, goCaches(t)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("the README's walkthrough failed (%v) after %s:\n%s", err, time.Since(started).Round(time.Second), out.String())
	}
	t.Logf("walkthrough ran in %s", time.Since(started).Round(100*time.Millisecond))
	// It ends with delete --all: nothing is left.
	if got := e.must("get", "clusters", "-o", "json").stdout; strings.TrimSpace(got) != "[]" {
		t.Errorf("clusters left after the walkthrough: %s", got)
	}
	for _, file := range []string{"blue.kubeconfig", "blue.db"} {
		if info, err := os.Stat(filepath.Join(dir, file)); err != nil || info.Size() == 0 {
			t.Errorf("the walkthrough wrote no %s: %v", file, err)
		}
	}
}

// readmeBlock is the README's sh blocks marked with marker, in order, joined.
func readmeBlock(t *testing.T, readme, marker string) string {
	t.Helper()
	f, err := os.Open(readme)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var script strings.Builder
	blocks := 0
	marked, inBlock := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case inBlock && strings.HasPrefix(line, "```"):
			inBlock = false
		case inBlock:
			script.WriteString(line + "\n")
		case strings.HasPrefix(line, marker):
			marked = true
		case marked && strings.HasPrefix(line, "```sh"):
			marked, inBlock = false, true
			blocks++
		case marked && strings.TrimSpace(line) != "":
			t.Fatalf("%s: %q follows a %s marker; want a ```sh block right after it", readme, line, marker)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if blocks == 0 {
		t.Fatalf("%s has no block marked %q", readme, marker)
	}
	return script.String()
}

// pathWithoutKubesim is PATH less every directory that holds a kubesim,
// and withoutKubesimOnPath the environment less PATH and GOTOOLCHAIN (the
// quick start sets it): a fresh machine has neither.
func pathWithoutKubesim(t *testing.T) string {
	t.Helper()
	var dirs []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, "kubesim")); err == nil {
			continue
		}
		dirs = append(dirs, d)
	}
	return strings.Join(dirs, string(filepath.ListSeparator))
}

func withoutKubesimOnPath(t *testing.T) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name != "PATH" && name != "GOTOOLCHAIN" && name != "MAKEFLAGS" && name != "MFLAGS" {
			env = append(env, kv)
		}
	}
	return env
}

// goCaches are this machine's Go build and module caches and GOPATH, as
// variables: what `go env` says with the test's own HOME.
func goCaches(t *testing.T) []string {
	t.Helper()
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.Command(goBin, "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	values := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(values) != 3 {
		t.Fatalf("go env GOCACHE GOMODCACHE GOPATH: %q", out)
	}
	return []string{"GOCACHE=" + values[0], "GOMODCACHE=" + values[1], "GOPATH=" + values[2]}
}
