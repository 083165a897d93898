package scenario

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// decodeFile decodes and defaults a scenario file, as parse does before
// it validates.
func decodeFile(t *testing.T, path string) (*File, func() error) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, root, err := decode(data, nil, map[string]bool{})
	if err != nil {
		t.Fatal(err)
	}
	setDefaults(s, filepath.Dir(path))
	return &File{Path: path, Scenario: s}, func() error { return validate(s, root) }
}

// Validation changes nothing: defaults are set before it.
func TestValidateChangesNothing(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	write("web.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n")
	inline := write("s.yaml", head+`clusters: [{name: a}, {name: b}]
steps:
- {cluster: a, apply: {file: web.yaml, resource: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}}}
- {cluster: b, delete: {files: [web.yaml]}}
- cluster: a
  foreach: {values: [1, 2], steps: [{sleep: 1s}, {federate: [a, b]}, {cluster: b, wait: {pods: {count: 1}}}]}
`)
	scenarios, _ := examples(t)
	for _, path := range append(scenarios, inline) {
		f, validate := decodeFile(t, path)
		want, _ := decodeFile(t, path)
		if err := validate(); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if !reflect.DeepEqual(f.Scenario, want.Scenario) {
			t.Errorf("%s: validate changed the scenario", path)
		}
	}
}

func TestDefaults(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.yaml")
	text := head + `clusters: [{name: a, from: prod.yaml}, {name: b, from: /abs/prod.yaml}]
steps:
- {cluster: a, apply: {file: web.yaml, files: [db.yaml], resource: {kind: X}}}
- {cluster: b, deschedule: {policy: p.yaml}}
- name: round
  cluster: a
  foreach: {values: [1], steps: [{sleep: 1s}, {federate: [a, b]}, {cluster: b, sleep: 2s}]}
`
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	f, _ := decodeFile(t, path)
	s := f.Scenario
	if a := s.Steps[0].Apply; a.File != "" || !reflect.DeepEqual(a.Files, []string{filepath.Join(dir, "web.yaml"), filepath.Join(dir, "db.yaml")}) ||
		a.Resource != nil || len(a.Resources) != 1 {
		t.Errorf("apply: %+v", a)
	}
	if p := s.Steps[1].Deschedule.Policy; p != filepath.Join(dir, "p.yaml") {
		t.Errorf("policy %s", p)
	}
	if a, b := s.Clusters[0].From, s.Clusters[1].From; a != filepath.Join(dir, "prod.yaml") || b != "/abs/prod.yaml" {
		t.Errorf("from: %s and %s, want relative to the file, absolute as given", a, b)
	}
	it := iterationSteps(&s.Steps[2])[0]
	if it[0].Cluster != "a" || it[1].Cluster != "" || it[2].Cluster != "b" || it[0].Name != "round" {
		t.Errorf("a foreach's steps: %+v", it)
	}

	if err := os.WriteFile(path, []byte(head+"steps:\n- sleep: 1s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if f, _ = decodeFile(t, path); f.Scenario.Cluster == nil {
		t.Error("a scenario without clusters gets one")
	}
}
