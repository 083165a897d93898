package stage

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/template"
	"time"

	"sigs.k8s.io/yaml"
)

// KWOK v0.8.0's own test cases for its published stages
// (test/e2e/testdata/kwok-v0.8.0, copied unchanged with its licence): each
// *.input.yaml object, given the stages of its directory, turns into its
// *.output.yaml — every stage that matches, with its delay range, weight and
// steps. Context helpers render as KWOK's harness renders them
// ("<NodeIP>", `<PodIPWith("node", false, ...)>`), so the outputs compare
// exactly; the object is treated as KWOK's harness treats it, as an
// unstructured object (patches default to merge patches).
const kwokV080 = "../../test/e2e/testdata/kwok-v0.8.0/stage"

// kwokTestNow is the clock KWOK's harness runs its cases at.
var kwokTestNow = time.Date(2006, 1, 2, 15, 4, 5, 0, time.UTC)

func TestKWOKv080StageCases(t *testing.T) {
	inputs, _ := filepath.Glob(filepath.Join(kwokV080, "*", "*", "testdata", "*.input.yaml"))
	if len(inputs) != 16 {
		t.Fatalf("found %d of KWOK v0.8.0's 16 stage cases in %s", len(inputs), kwokV080)
	}
	for _, in := range inputs {
		name, _ := filepath.Rel(kwokV080, strings.TrimSuffix(in, ".input.yaml"))
		t.Run(strings.Replace(name, "/testdata/", "/", 1), func(t *testing.T) {
			got := kwokCase(t, in)
			var want any
			data, err := os.ReadFile(strings.TrimSuffix(in, ".input.yaml") + ".output.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal(data, &want); err != nil {
				t.Fatal(err)
			}
			if diff := matchCase(want, got, ""); diff != "" {
				gotYAML, _ := yaml.Marshal(got)
				t.Errorf("%s\ngot:\n%s", diff, gotYAML)
			}
		})
	}
}

// kwokCase runs one case as KWOK's harness does.
func kwokCase(t *testing.T, input string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(input)
	if err != nil {
		t.Fatal(err)
	}
	var o map[string]any
	if err := yaml.Unmarshal(data, &o); err != nil {
		t.Fatal(err)
	}
	o = Normalize(o).(map[string]any)
	apiVersion, kind := o["apiVersion"].(string), o["kind"].(string)
	group := ""
	if i := strings.Index(apiVersion, "/"); i >= 0 {
		group = apiVersion[:i]
	}
	var stages []*Stage
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(input), "..", "*.yaml"))
	for _, f := range files {
		text, _ := os.ReadFile(f)
		if !strings.Contains(string(text), "kind: Stage\n") {
			continue // the kustomization, a StorageClass
		}
		s, err := Parse(text)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		c, err := Compile(s)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		stages = append(stages, c)
	}
	meta := o["metadata"].(map[string]any)
	out := map[string]any{"apiGroup": apiVersion, "kind": kind, "name": meta["name"]}
	if ns, ok := meta["namespace"]; ok {
		out["namespace"] = ns
	}
	var matched []any
	for _, s := range NewLifecycle(group, kind, stages).Stages() {
		ok, err := s.selector.matches(o)
		if err != nil {
			t.Fatalf("stage %s: %v", s.Name, err)
		}
		if !ok {
			continue
		}
		m := map[string]any{"stage": s.Name}
		if s.Spec.Delay != nil {
			lo, hi, fault := s.DelayRange(o, kwokTestNow)
			if fault != nil {
				t.Fatal(fault)
			}
			m["delay"] = []any{int(lo)}
			if hi != lo {
				m["delay"] = []any{int(lo), int(hi)}
			}
		}
		w, err := s.weight(o)
		if err != nil {
			t.Fatal(err)
		}
		m["weight"] = int(w)
		plan, err := s.Plan(o, Traits{Custom: true}, kwokHarnessFuncs)
		if err != nil {
			t.Fatalf("stage %s: %v", s.Name, err)
		}
		next := []any{}
		for _, step := range plan {
			next = append(next, kwokStep(t, step))
		}
		if s.Spec.ImmediateNextStage {
			next = append(next, map[string]any{"kind": "immediate"})
		}
		m["next"] = next
		matched = append(matched, m)
	}
	out["stages"] = matched
	return out
}

// kwokStep writes a planned step as KWOK's harness writes it.
func kwokStep(t *testing.T, s Step) map[string]any {
	switch s.Op {
	case EmitEvent:
		return map[string]any{"kind": "event", "type": s.Event.Type, "reason": s.Event.Reason, "message": s.Event.Message}
	case DeleteObject:
		return map[string]any{"kind": "delete"}
	}
	kind, typ, sub, data := "patch", string(s.Patch.Type), s.Patch.Subresource, s.Patch.Data
	if s.Op == ApplyObject {
		kind, typ, sub, data = "apply", string(s.Apply.Type), s.Apply.Subresource, s.Apply.Data
	}
	var body any
	if err := json.Unmarshal(data, &body); err != nil {
		t.Fatal(err)
	}
	out := map[string]any{"kind": kind, "type": typ, "data": body}
	if sub != "" {
		out["subresource"] = sub
	}
	return out
}

// kwokHarnessFuncs render the context helpers as KWOK's harness does: a
// helper's name and arguments in angle brackets; list helpers as two of
// them.
var kwokHarnessFuncs = func() template.FuncMap {
	one := func(name string) func(...any) string {
		return func(args ...any) string { return "<" + call(name, args) + ">" }
	}
	two := func(name string) func(...any) []any {
		return func(args ...any) []any {
			return []any{"<0 of " + call(name, args) + ">", "<1 of " + call(name, args) + ">"}
		}
	}
	funcs := template.FuncMap{"NodeConditions": func() []any { return kwokNodeConditions }}
	for _, n := range []string{"NodeIP", "NodeName", "NodePort", "PodIP", "NodeIPWith", "PodIPWith", "Now", "Version"} {
		funcs[n] = one(n)
	}
	for _, n := range []string{"NodeIPsWith", "PodIPsWith"} {
		funcs[n] = two(n)
	}
	return funcs
}()

func call(name string, args []any) string {
	if len(args) == 0 {
		return name
	}
	var parts []string
	for _, a := range args {
		parts = append(parts, fmt.Sprintf("%#v", a))
	}
	return name + "(" + strings.Join(parts, ", ") + ")"
}

// kwokNodeConditions are the conditions KWOK's NodeConditions helper gives.
var kwokNodeConditions = func() []any {
	var out []any
	for _, c := range [][4]string{
		{"Ready", "True", "KubeletReady", "kubelet is posting ready status"},
		{"MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"},
		{"DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
		{"PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"},
		{"NetworkUnavailable", "False", "RouteCreated", "RouteController created a route"},
	} {
		out = append(out, map[string]any{"type": c[0], "status": c[1], "reason": c[2], "message": c[3]})
	}
	return out
}()

// matchCase compares an expected output with ours: equal, except that an
// expected weight missing means any, and an expected delay missing means
// none. It returns the first difference, or "".
func matchCase(want, got any, path string) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: want an object, got %v", path, got)
		}
		for k, wv := range w {
			if d := matchCase(wv, g[k], path+"."+k); d != "" {
				return d
			}
		}
		for k, gv := range g {
			if _, ok := w[k]; ok {
				continue
			}
			if k == "weight" || (k == "delay" && fmt.Sprint(gv) == "[0]") {
				continue
			}
			return fmt.Sprintf("%s.%s: not expected, got %v", path, k, gv)
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: want %d items %v, got %v", path, len(w), w, got)
		}
		for i := range w {
			if d := matchCase(w[i], g[i], fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
		return ""
	default:
		if wn, ok := number(want); ok {
			if gn, ok := number(got); ok && wn == gn {
				return ""
			}
		}
		if fmt.Sprint(want) != fmt.Sprint(got) {
			return fmt.Sprintf("%s: want %v, got %v", path, want, got)
		}
		return ""
	}
}

func number(v any) (float64, bool) {
	switch v := v.(type) {
	case int:
		return float64(v), true
	case float64:
		return v, true
	}
	return 0, false
}
