//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFirstHourMistakes: the mistakes of a user's first hour, each said in
// the user's words (the command, the flag or the field at fault, its file
// and line) with a non-zero exit, before anything is made.
func TestFirstHourMistakes(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		writeFile(t, p, []byte(body))
		return p
	}

	// A mistyped command before a flag is the mistake, not the flag.
	for args, typo := range map[string]string{
		"delete clusters --all":   `unknown command "clusters" for "kubesim delete"`,
		"create clustr --nodes 3": `unknown command "clustr" for "kubesim create"`,
	} {
		r := e.run(strings.Fields(args)...)
		if r.code == 0 || !strings.Contains(r.stderr, typo) || !strings.Contains(r.stderr, "Did you mean this?\n\tcluster") || strings.Contains(r.stderr, "unknown flag") {
			t.Errorf("kubesim %s: %s; want %s and the suggestion cluster", args, r, typo)
		}
	}
	e.fails("unknown flag: --node (did you mean --nodes?)", "create", "cluster", "--node", "3")

	// A time scale of 0 is refused wherever it is given, as -1 is.
	e.fails("--time-scale: must be a whole number from 1 (real time) to 1000, got 0", "create", "cluster", "--time-scale", "0")
	zero := file("zero.yaml", "apiVersion: kubesim.io/v1alpha1\nkind: Cluster\ntimeScale: 0\n")
	e.fails("--config "+zero+":3: timeScale: must be a whole number from 1 (real time) to 1000, got 0", "create", "cluster", "--config", zero)
	zeroRun := file("zero-run.yaml", "apiVersion: kubesim.io/v1alpha1\nkind: Scenario\ncluster:\n  timeScale: 0\nsteps:\n- sleep: 1s\n")
	e.fails(zeroRun+":4: cluster.timeScale: must be a whole number from 1 (real time) to 1000, got 0", "run", zeroRun)

	// Errors name the flag the user gave.
	e.fails("--template: open "+filepath.Join(dir, "nope.yaml")+": no such file or directory",
		"scale", "node", "--replicas", "1", "--template", filepath.Join(dir, "nope.yaml"))
	e.fails(`--from-context "nope": no such context`, "create", "cluster", "--from-context", "nope")

	// A value a scenario's field does not take is refused at load, with
	// its line and the values it takes, not waited out.
	runing := file("runing.yaml", "apiVersion: kubesim.io/v1alpha1\nkind: Scenario\nsteps:\n- sleep: 1s\n- wait:\n    pods:\n      phase: Runing\n      count: 2\n")
	e.fails(runing+`:7: steps[1].wait.pods.phase: "Runing" is not one of Pending, Running, Succeeded, Failed, Unknown`, "run", runing)

	// The same broken line is the same line to run and to create --config;
	// a Cluster file's errors have their line and list index.
	brokenRun := file("broken-run.yaml", "apiVersion: kubesim.io/v1alpha1\nkind: Scenario\nname: a\n# the next line is not YAML\ndescription: x: y\nsteps:\n- sleep: 1s\n")
	brokenConfig := file("broken-config.yaml", "apiVersion: kubesim.io/v1alpha1\nkind: Cluster\nname: a\n# the next line is not YAML\ndescription: x: y\n")
	e.fails(brokenRun+":5: not valid YAML: mapping values are not allowed in this context", "run", brokenRun)
	e.fails("--config "+brokenConfig+":5: not valid YAML: mapping values are not allowed in this context", "create", "cluster", "--config", brokenConfig)
	groups := file("groups.yaml", "apiVersion: kubesim.io/v1alpha1\nkind: Cluster\nnodeGroups:\n- count: 1\n- name: b\n  count: two\n")
	e.fails("--config "+groups+`:6: nodeGroups[1].count: must be an integer, got "two"`, "create", "cluster", "--config", groups)

	if entries, _ := os.ReadDir(filepath.Join(e.home, "clusters")); len(entries) != 0 {
		t.Errorf("refused commands left clusters behind: %v", entries)
	}
}

// TestFirstHourDeletedCurrentCluster: deleting the current context's
// cluster while another runs unsets the current context; the next command
// says so and names the clusters left, not that "kubesim" does not exist.
func TestFirstHourDeletedCurrentCluster(t *testing.T) {
	e := newEnv(t)
	e.createCluster("a")
	e.createCluster("b") // its context is current now
	if r := e.must("delete", "cluster"); !strings.Contains(r.stderr, `Cluster "b" (current context kubesim-b)`) {
		t.Fatalf("delete cluster without --name did not delete the current context's cluster b: %s", r)
	}
	want := `no current context (deleting the current context's cluster unsets it), and there is no cluster "kubesim" to default to; clusters: a (use --name or kubectl config use-context kubesim-a)`
	e.fails(want, "logs", "etcd")
	e.fails(want, "kubectl", "get", "ns")
	// What it says to do works.
	e.must("kubectl", "--name", "a", "config", "use-context", "kubesim-a", "--kubeconfig", e.kubeconfig)
	if r := e.must("get", "kubeconfig"); !strings.Contains(r.stderr, `Cluster "a" (current context kubesim-a)`) {
		t.Errorf("after use-context kubesim-a: %s", r)
	}
}
