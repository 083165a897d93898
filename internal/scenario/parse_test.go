package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/internal/snapshot"
)

func load(t *testing.T, text string, set map[string]string) (*File, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return Load(path, set, map[string]bool{})
}

const head = "apiVersion: kubesim.io/v1alpha1\nkind: Scenario\n"

func TestLoadSubstitutesParametersAndExpandsForeach(t *testing.T) {
	f, err := load(t, head+`parameters: {n: "3"}
cluster: {nodeGroups: [{count: 2}]}
steps:
- scale: {name: web, replicas: "${n}"}
- foreach:
    var: r
    values: [4, 5]
    steps:
    - scale: {name: web, replicas: "${r}"}
    - assert: [{pods: {selector: app=web, count: "${r}"}}]
`, map[string]string{"n": "7"})
	if err != nil {
		t.Fatal(err)
	}
	s := f.Scenario
	if s.Name != "s" || s.Steps[0].Scale.Replicas != 7 {
		t.Errorf("name %q, replicas %d; want s and 7 (--set)", s.Name, s.Steps[0].Scale.Replicas)
	}
	it := iterationSteps(&s.Steps[1])
	if len(it) != 2 || len(it[1]) != 2 || it[1][0].Scale.Replicas != 5 || *it[1][1].Assert[0].Pods.Count.Count != 5 {
		t.Fatalf("iterations: %+v", it)
	}
	if it[0][0].Line != 11 {
		t.Errorf("line of an expanded step: %d, want 11", it[0][0].Line)
	}
}

func TestLoadErrorsNameLineAndField(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{head + "steps:\n- drain: {node: a, expct: blocked}\n", `:4: unknown field "steps[0].drain.expct"`},
		{head + "steps:\n- drain: {node: a, expect: maybe}\n", `:4: steps[0].drain.expect: "maybe" is not one of completes, blocked`},
		{head + "steps:\n- drain: {node: a, nodes: {selector: pool=old}}\n", `:4: steps[0].drain: node and nodes: give one of them`},
		{head + "steps:\n- drain: {maxUnavailable: 2}\n", `:4: steps[0].drain: nodes: name the nodes to drain`},
		{head + "steps:\n- drain: {nodes: {selector: pool=old}, maxUnavailable: -1}\n", `:4: steps[0].drain: maxUnavailable: -1; give how many nodes a wave drains at once`},
		{head + "steps:\n- drain: {nodes: {selector: pool=old}, surge: {nodeGroup: new}}\n", `:4: steps[0].drain: surge.count: 0; give how many nodes to add to node group "new"`},
		{head + "steps:\n- drain: {nodes: {selector: pool=old}, surge: {nodeGroup: new, count: 2, zone: a}}\n", `:4: unknown field "steps[0].drain.surge.zone"`},
		{head + "cluster: {nodeGroups: [{name: old, count: 2}]}\nsteps:\n- drain: {nodes: [old-0], surge: {nodeGroup: neww, count: 1}}\n", `:5: steps[0].drain.surge.nodeGroup: no node group "neww" in the cluster; declare it under nodeGroups (count: 0 will do)`},
		{head + "steps:\n- sleep: 1s\n  wait: {pods: {count: 1}}\n", ":4: steps[0]: has wait and sleep; one action per step"},
		{head + "steps:\n- scale: {name: web, replicas: \"${nope}\"}\n", ":4: ${nope} is neither a parameter"},
		{head + "steps:\n- assert: [{cel: 'pods.size() >'}]\n", ":4: steps[0].assert: [0]: cel:"},
		{head + "steps:\n- scale: {name: web,\n    replicas: many}\n", ":5: steps[0].scale.replicas: must be an integer"},
		{head + "cluster: {stages: slow}\nsteps:\n- sleep: 1s\n", `:3: cluster.stages: "slow" is not one of fast, realistic`},
		{"apiVersion: v1\nkind: Pod\n", "kind: got Pod, want Scenario"},
		{head + "steps:\n- scale: {name: web, replicas: ${x}}\n", `:4: not valid YAML: did not find expected ',' or '}' (inside {...}, quote a reference: "${name}")`},
		{head + "steps:\n- sleep: 1s\n- wait: {pods: {count: 1}\n- sleep: 2s\n", ":5: not valid YAML"},
		{head + "steps:\n- cluster: b\n  sleep: 1s\n", `steps[0].cluster: no cluster named "b"`},
		{head + "clusters: [{name: a}, {name: b}]\nsteps:\n- sleep: 1s\n", `:5: steps[0].cluster: required with several clusters; name one of a, b`},
		{head + "clusters: [{name: a}, {}]\nsteps:\n- sleep: 1s\n", `:3: clusters[1].name: required`},
		{head + "clusters: [{name: a}, {name: b}]\nsteps:\n- federate: [a, c]\n", `:5: steps[0].federate[1]: no cluster named "c" in clusters: (a, b)`},
		{head + "clusters: [{name: a}, {name: b}]\nsteps:\n- federate: [a, a]\n", `:5: steps[0].federate[1]: "a" is named twice`},
		{head + "clusters: [{name: a}, {name: b}]\nsteps:\n- federate: [a]\n", `:5: steps[0].federate: name two or more`},
		{head + "clusters: [{name: a}, {name: b}]\nsteps:\n- {cluster: a, federate: [a, b]}\n", `:5: steps[0].cluster: a federate step acts on the clusters it names; remove cluster: a`},
		{head + "clusters: [{name: a}, {name: b}]\nsteps:\n- federate: {a: b}\n", `:5: steps[0].federate: must be a list, got a mapping`},
		{head + "steps:\n- assert:\n  - dpdb: {name: x, allowed: 1}\n", `:5: unknown field "steps[0].assert[0].dpdb.allowed"`},
		{head + "steps:\n- wait: {dpdb: {name: x, names: [y], disruptionsAllowed: 1}}\n", `:4: steps[0].wait: dpdb: give name or names, not both`},
		{head + "steps:\n- assert: [{pdb: {name: x}}]\n", `:4: steps[0].assert: [0]: pdb: give disruptionsAllowed or currentHealthy`},
		{head + "cluster: {existing: mine, disableDPDBController: true}\nsteps:\n- sleep: 1s\n", `:3: cluster.existing: a cluster used as it is takes no nodeGroups or options`},
		{head + "cluster: {disableDPDBControler: true}\nsteps:\n- sleep: 1s\n", `unknown field "cluster.disableDPDBControler"`},
		{head + "clusters: [{name: a}, {name: b}]\nsteps:\n- foreach: {var: x, values: [1], steps: [{sleep: 1s}]}\n", `:5: steps[0].foreach.steps[0].cluster: required with several clusters`},
		{head + "clusters: [{name: a}, {name: b}]\nsteps:\n- {cluster: c, foreach: {values: [1], steps: [{sleep: 1s}]}}\n", `:5: steps[0].cluster: no cluster named "c"`},
		{head + "steps:\n- kueueSimulate: {resource: {apiVersion: batch/v1, kind: Job, metadata: {name: j}}, expect: fits}\n", `:4: steps[0].kueueSimulate: expect: "fits" is no verdict of Kueue's; use one of admitted, quotaReserved, pending, preempts`},
		{head + "steps:\n- kueueSimulate: {resource: {apiVersion: batch/v1, kind: Job, metadata: {name: j}}, expect: admitted, why: quota}\n", `:4: steps[0].kueueSimulate: why: is Kueue's reason for a pending Job; set expect: pending with it`},
		{head + "steps:\n- kueueSimulate: {resource: {apiVersion: v1, kind: Pod, metadata: {name: p}}}\n", `:4: steps[0].kueueSimulate: give one batch/v1 Job (the kind of Kueue's integration kubesim runs); got Pod`},
		{head + "steps:\n- kueueSimulate: {expect: pending}\n", `:4: steps[0].kueueSimulate: give file or resource: the Job to ask Kueue about`},
	} {
		_, err := load(t, tc.text, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant %s", tc.text, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("error spans lines: %q", err)
		}
	}
}

func TestLoadRefusesUnknownSet(t *testing.T) {
	used := map[string]bool{}
	path := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(path, []byte(head+"parameters: {a: 1}\nsteps:\n- sleep: 1s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path, map[string]string{"b": "2"}, used); err != nil || !used["a"] || used["b"] {
		t.Errorf("used %v, err %v", used, err)
	}
}

// The ring example: three clusters, a federate step, DPDB assertions; a
// foreach's cluster is its steps' default.
func TestLoadDPDBRingExample(t *testing.T) {
	f, err := Load(filepath.Join("..", "..", "examples", "dpdb-ring.yaml"), nil, map[string]bool{})
	if err != nil {
		t.Fatal(err)
	}
	s := f.Scenario
	if len(s.Clusters) != 3 || strings.Join(s.Steps[0].Federate, ",") != "red,blue,green" {
		t.Fatalf("clusters %d, first step %+v", len(s.Clusters), s.Steps[0])
	}
	waits := 0
	for _, st := range s.Steps {
		for _, it := range iterationSteps(&st) {
			for _, x := range it {
				if x.Wait != nil && x.Wait.DPDB != nil {
					waits++
				}
			}
		}
	}
	if waits != 6 {
		t.Errorf("dpdb waits in foreach iterations: %d, want 6", waits)
	}

	f, err = load(t, head+`clusters: [{name: a, disableDPDBController: true}, {name: b}]
steps:
- cluster: b
  foreach: {var: x, values: [1, 2], steps: [{sleep: 1s}, {cluster: a, sleep: 2s}]}
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	it := iterationSteps(&f.Scenario.Steps[0])
	if it[1][0].Cluster != "b" || it[1][1].Cluster != "a" {
		t.Errorf("clusters of a foreach's steps: %q, %q; want b (the foreach's) and a (its own)", it[1][0].Cluster, it[1][1].Cluster)
	}
	if c := ClusterConfig(&f.Scenario.Clusters[0], "x"); !c.DisableDPDBController {
		t.Error("disableDPDBController did not reach the Cluster")
	}
}

// Every shipped example loads: its fields, files and references check
// out, and the snapshots beside them (clones' sources) read.
func TestExamplesLoad(t *testing.T) {
	files, snapshots := examples(t)
	if len(files) == 0 || len(snapshots) == 0 {
		t.Fatalf("examples: %d scenarios, %d snapshots", len(files), len(snapshots))
	}
	for _, f := range files {
		if _, err := Load(f, nil, map[string]bool{}); err != nil {
			t.Error(err)
		}
	}
	for _, path := range snapshots {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, objects, err := snapshot.Read(f); err != nil || len(objects) == 0 {
			t.Errorf("%s: %d objects, %v", path, len(objects), err)
		}
		f.Close()
	}
}

// examples are the scenario files in examples/ (each file a glob of
// examples/*.yaml picks is one: `kubesim run examples/*.yaml`), and the
// snapshot files (`kubesim snapshot export`) in its directories, beside
// the scenarios that clone them.
func examples(t *testing.T) (scenarios, snapshots []string) {
	t.Helper()
	scenarios, err := filepath.Glob(filepath.Join("..", "..", "examples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := filepath.Glob(filepath.Join("..", "..", "examples", "*", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range data {
		content, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(content), snapshot.HeaderPrefix) {
			snapshots = append(snapshots, f)
		}
	}
	return scenarios, snapshots
}
