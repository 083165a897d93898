//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// walkthroughMarker is the HTML comment (invisible on GitHub) that marks a
// README block TestREADMEWalkthrough runs.
const walkthroughMarker = "<!-- walkthrough"

// TestREADMEWalkthrough runs README.md's walkthrough top to bottom, as
// written, as a new user would: kubesim on PATH, their own KUBESIM_HOME,
// KUBECONFIG and working directory. kubectl lines run as `kubesim kubectl`
// (a kubectl on PATH that is kubesim's own), as CI machines may have none.
func TestREADMEWalkthrough(t *testing.T) {
	e := newEnv(t)
	script := walkthroughScript(t, "../../README.md")
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(binary, filepath.Join(bin, "kubesim")); err != nil {
		t.Fatal(err)
	}
	shim := "#!/bin/sh\nexec kubesim kubectl \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "kubectl"), []byte(shim), 0o700); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	started := time.Now()
	// -e: a failing line fails the walkthrough; -x: says which.
	cmd := exec.CommandContext(ctx, "bash", "-euxo", "pipefail", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "HOME="+dir,
		"KUBESIM_HOME="+e.home, "KUBECONFIG="+e.kubeconfig)
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

// walkthroughScript is the README's marked sh blocks, in order, joined.
func walkthroughScript(t *testing.T, readme string) string {
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
		case strings.HasPrefix(line, walkthroughMarker):
			marked = true
		case marked && strings.HasPrefix(line, "```sh"):
			marked, inBlock = false, true
			blocks++
		case marked && strings.TrimSpace(line) != "":
			t.Fatalf("%s: %q follows a walkthrough marker; want a ```sh block right after it", readme, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if blocks == 0 {
		t.Fatalf("%s has no block marked %q", readme, walkthroughMarker)
	}
	return script.String()
}
