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
		want := ":3: " + f.field + ": not in a scenario: " + f.reason
		if err == nil || !strings.HasSuffix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line ending %q", f.field, err, want)
		}
	}
	for field, want := range map[string]string{"auditPolicy: no.yaml": ":3: auditPolicy: stat ", "stageFiles: [a.yaml, no.yaml]": ":3: stageFiles[0]: stat "} {
		if _, err := load(t, head+"cluster: {"+field+"}\nsteps:\n- sleep: 1s\n", nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error containing %q", field, err, want)
		}
	}
	if _, err := load(t, head+"cluster: {existing: mine, scheduler: {explainPods: 0}}\nsteps:\n- sleep: 1s\n", nil); err == nil ||
		!strings.Contains(err.Error(), "existing: a cluster used as it is takes no nodeGroups or options") {
		t.Errorf("existing with an option: %v", err)
	}
}
