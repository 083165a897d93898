package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A scenario's cluster takes a Cluster file's options, but for those on
// notInScenario, each refused in one line with its reason.
func TestScenarioClusterSpec(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"audit.yaml", "stages/slow.yaml"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(path, []byte(head+`cluster:
  memoryLimit: 2Gi
  networking: {podSubnet: 10.0.0.0/9}
  auditPolicy: audit.yaml
  stageFiles: [stages/slow.yaml]
  nodeGroups: [{count: 1}]
steps:
- sleep: 1s
`), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path, nil, map[string]bool{})
	if err != nil {
		t.Fatal(err)
	}
	c := f.Scenario.Cluster
	if c.MemoryLimit.String() != "2Gi" || c.Networking.PodSubnet != "10.0.0.0/9" {
		t.Errorf("options: %+v", c.ClusterSpec)
	}
	if c.AuditPolicy != filepath.Join(dir, "audit.yaml") || c.StageFiles[0] != filepath.Join(dir, "stages", "slow.yaml") {
		t.Errorf("paths are not relative to the scenario's file: %q, %q", c.AuditPolicy, c.StageFiles)
	}
	made := ClusterConfig(c, "x")
	if made.Name != "x" || made.MemoryLimit.String() != "2Gi" || len(made.NodeGroups) != 0 {
		t.Errorf("ClusterConfig: %+v; want the options, and no node groups (the run makes them)", made)
	}

	for _, f := range notInScenario {
		value := map[string]string{"nodes": "3", "nodeTemplate": "node.yaml", "disableKubeletSim": "true"}[f.field]
		if value == "" {
			t.Fatalf("no value to try for %s", f.field)
		}
		_, err := load(t, head+"cluster: {"+f.field+": "+value+"}\nsteps:\n- sleep: 1s\n", nil)
		want := ":3: cluster." + f.field + ": not in a scenario: " + f.reason
		if err == nil || !strings.HasSuffix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line ending %q", f.field, err, want)
		}
	}
	for field, want := range map[string]string{"auditPolicy: no.yaml": ":3: cluster.auditPolicy: stat ", "stageFiles: [a.yaml, no.yaml]": ":3: cluster.stageFiles[0]: stat "} {
		if _, err := load(t, head+"cluster: {"+field+"}\nsteps:\n- sleep: 1s\n", nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error containing %q", field, err, want)
		}
	}
	if _, err := load(t, head+"cluster: {existing: mine, scheduler: {explainPods: 0}}\nsteps:\n- sleep: 1s\n", nil); err == nil ||
		!strings.Contains(err.Error(), ":3: cluster.existing: a cluster used as it is takes no nodeGroups or options") {
		t.Errorf("existing with an option: %v", err)
	}
}

// An option a scenario's cluster gives that Validate refuses is said at
// the option's own line, with its path from the scenario's top.
func TestClusterErrorsHaveTheFieldsLine(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{head + "clusters:\n- name: a\n- name: b\n  networking:\n    serviceSubnet: 10.0.0.0/24\nsteps:\n- {cluster: a, sleep: 1s}\n",
			":7: clusters[1].networking.serviceSubnet: 10.0.0.0/24 overlaps networking.podSubnet"},
		{head + "cluster:\n  nodeGroups:\n  - count: 1\n  - name: gpu\n    template: no.yaml\nsteps:\n- sleep: 1s\n",
			":7: cluster.nodeGroups[1].template: open "},
		{head + "cluster:\n  memoryLimit: 1Gi\n  timeScale: 0\nsteps:\n- sleep: 1s\n",
			":5: cluster.timeScale: must be a whole number from 1 (real time) to 1000, got 0"},
		{head + "parameters: {scale: 0}\nclusters:\n- name: a\n  timeScale: ${scale}\nsteps:\n- sleep: 1s\n",
			":6: clusters[0].timeScale: must be a whole number from 1 (real time) to 1000, got 0"},
		{head + "cluster:\n  timeScale: -1\nsteps:\n- sleep: 1s\n",
			":4: cluster.timeScale (--time-scale): must be a whole number from 1 (real time) to 1000, got -1"},
	} {
		_, err := load(t, tc.text, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant %s", tc.text, err, tc.want)
		}
	}
}
