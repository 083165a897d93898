package cli

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

// execute runs the kubesim command line with args, in a kubesim home of
// its own, and returns what it printed and its error.
func execute(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	t.Setenv("KUBESIM_HOME", t.TempDir())
	root := NewRootCommand()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err = root.Execute()
	return out.String(), errOut.String(), err
}

// Upstream's --version (component-base's verflag, on pflag.CommandLine)
// must not reach kubesim's commands: `kubesim version` is the way to ask.
func TestNoCommandHasAVersionFlag(t *testing.T) {
	var visit func(*cobra.Command)
	visit = func(c *cobra.Command) {
		if strings.Contains(c.UsageString(), "--version") {
			t.Errorf("%q lists --version in its help:\n%s", c.CommandPath(), c.UsageString())
		}
		for _, sub := range c.Commands() {
			visit(sub)
		}
	}
	visit(NewRootCommand())

	if _, _, err := execute(t, "--version"); err == nil || err.Error() != "unknown flag: --version" {
		t.Errorf("kubesim --version: %v, want unknown flag: --version", err)
	}
	if out, _, err := execute(t, "version"); err != nil || !strings.HasPrefix(out, "kubesim ") {
		t.Errorf("kubesim version: %q, %v", out, err)
	}
}

// --name "" is refused with the name rule by every command aimed at one
// cluster, rather than meaning the default or the current cluster.
func TestEmptyNameIsRefused(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "config"))
	for _, args := range [][]string{
		{"create", "cluster", "--name", ""},
		{"delete", "cluster", "--name", ""},
		{"start", "cluster", "--name", ""},
		{"stop", "cluster", "--name", ""},
		{"logs", "--name", "", "etcd"},
		{"kubectl", "--name", "", "get", "ns"},
		{"kubectl", "--name=", "get", "ns"},
		{"get", "kubeconfig", "--name", ""},
		{"scale", "node", "--name", "", "--replicas", "1"},
	} {
		_, _, err := execute(t, args...)
		if err == nil || !strings.Contains(err.Error(), `invalid cluster name "": must be a DNS label`) {
			t.Errorf("kubesim %q: %v, want the name rule", args, err)
		}
	}
}

func TestMissingClusterIsSaidOnce(t *testing.T) {
	_, _, err := execute(t, "logs", "--name", "nosuch", "kube-apiserver")
	if want := `cluster "nosuch" does not exist (kubesim get clusters lists them)`; err == nil || err.Error() != want {
		t.Errorf("logs of a missing cluster: %v, want %q", err, want)
	}
}

// `version -o json` is what programs (kubesimtest) read the binary's API
// revision from.
func TestVersionJSON(t *testing.T) {
	out, _, err := execute(t, "version", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		Kubesim     string   `json:"kubesim"`
		APIRevision int      `json:"apiRevision"`
		Patches     []string `json:"patches"`
	}
	if err := json.Unmarshal([]byte(out), &info); err != nil || info.Kubesim == "" || info.APIRevision != v1alpha1.Revision || info.Patches == nil {
		t.Errorf("version -o json: %s (%v), want kubesim, apiRevision %d and a list of patches", out, err, v1alpha1.Revision)
	}
}
