package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A mistyped command followed by a flag is named as the mistake, with its
// suggestion, rather than the flag its group does not have; an unknown
// flag is said with the nearest one.
func TestTyposBeforeFlagsAndTyposOfFlags(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "config"))
	for args, want := range map[string]string{
		"delete clusters --all":       "unknown command \"clusters\" for \"kubesim delete\"\n\nDid you mean this?\n\tcluster",
		"create clustr --nodes 3":     "unknown command \"clustr\" for \"kubesim create\"\n\nDid you mean this?\n\tcluster",
		"get clusterz -o json":        "unknown command \"clusterz\" for \"kubesim get\"\n\nDid you mean this?\n\tclusters",
		"gett clusters --all":         "unknown command \"gett\" for \"kubesim\"\n\nDid you mean this?\n\tget",
		"create --nodes 3":            `unknown flag: --nodes (a flag of "kubesim create cluster")`,
		"create cluster --node 3":     "unknown flag: --node (did you mean --nodes?)",
		"delete cluster --al":         "unknown flag: --al (did you mean --all?)",
		"scale node --replica 3":      "unknown flag: --replica (did you mean --replicas?)",
		"create cluster --zzzzzzzz 1": "unknown flag: --zzzzzzzz",
	} {
		_, _, err := execute(t, strings.Fields(args)...)
		if err == nil || strings.TrimRight(err.Error(), "\n") != want {
			t.Errorf("kubesim %s: %v, want %q", args, err, want)
		}
	}
}

// --time-scale 0 is refused as -1 is, and so is timeScale: 0 in a Cluster
// file: in the spec 0 means "not set" (real time), which was not asked.
func TestTimeScaleZeroIsRefused(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "config"))
	config := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(config, []byte("apiVersion: kubesim.io/v1alpha1\nkind: Cluster\n# real time?\ntimeScale: 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for args, want := range map[string]string{
		"create cluster --time-scale 0":     "--time-scale: must be a whole number from 1 (real time) to 1000, got 0",
		"create cluster --time-scale -1":    "--time-scale: must be a whole number from 1 (real time) to 1000, got -1",
		"create cluster --time-scale 1001":  "--time-scale: must be a whole number from 1 (real time) to 1000, got 1001",
		"create cluster --config " + config: "--config " + config + ":4: timeScale: must be a whole number from 1 (real time) to 1000, got 0",
	} {
		_, _, err := execute(t, strings.Fields(args)...)
		if err == nil || err.Error() != want {
			t.Errorf("kubesim %s: %v, want %q", args, err, want)
		}
	}
}

// An error about a flag's value names the flag the user gave, not
// another: --template (scale node's alias), not --node-template;
// --from-context, not snapshot export's --context; a Cluster file's
// nodeTemplate, not a flag that was not given.
func TestErrorsNameTheFlagGiven(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "config")
	t.Setenv("KUBECONFIG", kubeconfig)
	writeKubeconfig(t, kubeconfig, "prod", nil)
	missing := filepath.Join(dir, "nope.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	config := filepath.Join(dir, "c.yaml")
	for path, body := range map[string]string{
		bad:    "apiVersion: v1\nkind: Node\nspec:\n  podCIDRR: x\n",
		config: "apiVersion: kubesim.io/v1alpha1\nkind: Cluster\nnodes: 1\nnodeTemplate: " + missing + "\n",
	} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for args, want := range map[string]string{
		"scale node --replicas 1 --template " + missing:      "--template: open " + missing + ": no such file or directory",
		"scale node --replicas 1 --node-template " + missing: "--node-template: open " + missing + ": no such file or directory",
		"scale node --replicas 1 --template " + bad:          "--template " + bad + `:4: unknown field "spec.podCIDRR"`,
		"scale node --replicas 1 --label zone":               `--label "zone": want key=value`,
		"scale node --replicas 1 --node-label zone":          `--node-label "zone": want key=value`,
		"create cluster --nodes 1 --node-template " + bad:    "--node-template " + bad + `:4: unknown field "spec.podCIDRR"`,
		"create cluster --config " + config:                  "nodeTemplate (--config " + config + "): open " + missing + ": no such file or directory",
		"create cluster --from-context nope":                 `--from-context "nope": no such context in the kubeconfig (it has: prod)`,
	} {
		_, _, err := execute(t, strings.Fields(args)...)
		if err == nil || err.Error() != want {
			t.Errorf("kubesim %s: %v, want %q", args, err, want)
		}
	}
}
