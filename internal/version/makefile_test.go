package version

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// makeIn runs make in the repository's root as a fresh shell would on a
// machine whose go defaults to GOTOOLCHAIN=local (go env): without
// GOTOOLCHAIN, and without the toolchain `go test` puts first on PATH.
func makeIn(t *testing.T, args ...string) (string, error) {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make here")
	}
	cmd := exec.Command("make", args...)
	cmd.Dir = filepath.Join("..", "..")
	testGo := filepath.Join(os.Getenv("GOROOT"), "bin")
	for _, kv := range os.Environ() {
		name, value, _ := strings.Cut(kv, "=")
		switch name {
		case "GOTOOLCHAIN", "GOROOT", "MAKEFLAGS", "MFLAGS":
			continue
		case "PATH":
			dirs := filepath.SplitList(value)
			dirs = slices.DeleteFunc(dirs, func(d string) bool { return d == testGo })
			kv = "PATH=" + strings.Join(dirs, string(filepath.ListSeparator))
		}
		cmd.Env = append(cmd.Env, kv)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// GNU make 4.3 passes no exported variable to $(shell …): the Makefile's
// own go calls must name the toolchain, or the build stamps an empty
// version and every command of the binary fails.
func TestMakefileStampsTheVersionsWithoutGOTOOLCHAINSet(t *testing.T) {
	out, err := makeIn(t, "-n", "build")
	if err != nil {
		t.Fatalf("make -n build: %v\n%s", err, out)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`version\.gitVersion=v1\.\d+\.\d+`),
		regexp.MustCompile(`version\.gitMinor=\d+ `),
		regexp.MustCompile(`version\.Clock=go/go1\.\d+\.\d+/`),
	} {
		if !want.MatchString(out) {
			t.Errorf("make -n build stamps no %s:\n%s", want, out)
		}
	}
}

// A stamp left empty fails the build in one line, before anything is built.
func TestMakefileRefusesAnEmptyStamp(t *testing.T) {
	out, err := makeIn(t, "stamps", "KUBE_VERSION=")
	if err == nil {
		t.Fatalf("make stamps with no Kubernetes version succeeded:\n%s", out)
	}
	if !strings.Contains(out, "no k8s.io/kubernetes version") {
		t.Errorf("the refusal does not say what is missing:\n%s", out)
	}
}
