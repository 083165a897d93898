package stage

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// compileSpec compiles a Stage manifest named test of the given spec, as
// YAML indented by two spaces.
func compileSpec(spec string) (*Stage, error) {
	s, err := Parse([]byte("apiVersion: kwok.x-k8s.io/v1alpha1\nkind: Stage\nmetadata: {name: test}\nspec:\n" + spec))
	if err != nil {
		return nil, err
	}
	return Compile(s)
}

// compileYAML is compileSpec, for specs that must compile.
func compileYAML(t *testing.T, spec string) *Stage {
	t.Helper()
	c, err := compileSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// ops names a plan's steps: "event", "patch <subresource or object>", "delete".
func ops(plan []Step) string {
	var out []string
	for _, s := range plan {
		switch s.Op {
		case SendPatch:
			target := s.Patch.Subresource
			if target == "" {
				target = "object"
			}
			out = append(out, "patch "+target)
		default:
			out = append(out, string(s.Op))
		}
	}
	return strings.Join(out, ", ")
}

const finalizedPod = `
metadata: {name: p, namespace: default, resourceVersion: "7", finalizers: [a, b]}
status: {phase: Running}
`

func TestPlanRecordsTheEventBeforeAnyWrite(t *testing.T) {
	s := compileYAML(t, `
  resourceRef: {apiGroup: v1, kind: Pod}
  next:
    event: {type: Warning, reason: Done, message: it is done}
    finalizers: {add: [{value: c}]}
    statusTemplate: "phase: Succeeded"
    patches: [{template: "metadata: {labels: {done: \"true\"}}"}]
`)
	plan, err := s.Plan(obj(t, finalizedPod), Traits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ops(plan), "event, patch object, patch status, patch object"; got != want {
		t.Fatalf("plan %q, want %q", got, want)
	}
	if ev := plan[0].Event; ev != (Event{Type: "Warning", Reason: "Done", Message: "it is done"}) {
		t.Errorf("event %+v", ev)
	}
	if got := string(plan[1].Patch.Data); got != `{"metadata":{"finalizers":["a","b","c"],"resourceVersion":"7"}}` {
		t.Errorf("finalizer patch %s", got)
	}
}

func TestPlanEventTypeIsNormalUnlessWarning(t *testing.T) {
	for typ, want := range map[string]string{"": "Normal", "Normal": "Normal", "Warning": "Warning", "Loud": "Normal"} {
		s := compileYAML(t, "  resourceRef: {kind: Pod}\n  next: {event: {type: \""+typ+"\", reason: R}}\n")
		plan, err := s.Plan(obj(t, finalizedPod), Traits{}, nil)
		if err != nil || len(plan) != 1 || plan[0].Event.Type != want {
			t.Errorf("event type %q: plan %+v, %v; want one %s event", typ, plan, err, want)
		}
	}
}

// A deleting stage clears the finalizers first, or the delete would wait
// on them, and renders nothing: not even a template that cannot render.
func TestPlanDeletesAfterTheFinalizersAndDoesNothingElse(t *testing.T) {
	s := compileYAML(t, `
  resourceRef: {kind: Pod}
  next:
    finalizers: {empty: true}
    delete: true
    statusTemplate: "ip: {{ PodIP }}"
`)
	plan, err := s.Plan(obj(t, finalizedPod), Traits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ops(plan), "patch object, delete"; got != want {
		t.Fatalf("plan %q, want %q", got, want)
	}
	p := plan[0].Patch
	if p.Type != types.MergePatchType || string(p.Data) != `{"metadata":{"finalizers":null,"resourceVersion":"7"}}` {
		t.Errorf("finalizer patch %s %s, want a merge patch clearing them, guarded by resourceVersion 7", p.Type, p.Data)
	}
}

func TestPlanPatchesFinalizersOnlyWhenTheyChange(t *testing.T) {
	for finalizers, want := range map[string]string{
		"{add: [{value: a}]}":                       "",
		"{remove: [{value: x}]}":                    "",
		"{remove: [{value: a}]}":                    `["b"]`,
		"{add: [{value: c}], remove: [{value: b}]}": `["a","c"]`,
		"{remove: [{value: a}], add: [{value: a}]}": `["b","a"]`,
		"{empty: true, add: [{value: b}]}":          `["b"]`,
	} {
		s := compileYAML(t, "  resourceRef: {kind: Pod}\n  next: {finalizers: "+finalizers+"}\n")
		plan, err := s.Plan(obj(t, finalizedPod), Traits{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case want == "" && len(plan) != 0:
			t.Errorf("%s leaves [a b] as they are, yet plans %q", finalizers, ops(plan))
		case want != "" && (len(plan) != 1 || !strings.Contains(string(plan[0].Patch.Data), `"finalizers":`+want)):
			t.Errorf("%s: plan %+v, want one patch to finalizers %s", finalizers, plan, want)
		}
	}
}

// A patch's own type wins; else built-in kinds get strategic merge patches
// and custom resources merge patches.
func TestPlanPatchTypes(t *testing.T) {
	s := compileYAML(t, `
  resourceRef: {kind: Pod}
  next:
    statusTemplate: "phase: Running"
    patches:
    - {type: json, template: "[]"}
    - {type: merge, template: "{}"}
    - {type: strategic, template: "{}"}
`)
	for traits, want := range map[Traits][]types.PatchType{
		{}:             {types.StrategicMergePatchType, types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType},
		{Custom: true}: {types.MergePatchType, types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType},
	} {
		plan, err := s.Plan(obj(t, finalizedPod), traits, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []types.PatchType
		for _, step := range plan {
			got = append(got, step.Patch.Type)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%+v: patch types %v, want %v", traits, got, want)
		}
	}
}

// Status patches go to the status subresource, or to the object itself
// where the kind has none; other subresources are left as they are.
func TestPlanStatusFallsBackToTheObjectWithoutAStatusSubresource(t *testing.T) {
	s := compileYAML(t, `
  resourceRef: {apiGroup: example.com, kind: Widget}
  next:
    statusTemplate: "ready: true"
    patches:
    - {subresource: status, root: status, template: "size: 1"}
    - {subresource: scale, template: "spec: {replicas: 1}"}
`)
	for traits, want := range map[Traits]string{
		{Custom: true}:                 "patch status, patch status, patch scale",
		{Custom: true, NoStatus: true}: "patch object, patch object, patch scale",
	} {
		plan, err := s.Plan(obj(t, finalizedPod), traits, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := ops(plan); got != want {
			t.Errorf("%+v: plan %q, want %q", traits, got, want)
		}
	}
}

// A template that fails to render fails the plan, but the event planned
// before it comes back with the error, to be recorded still.
func TestPlanThatFailsToRenderKeepsItsEvent(t *testing.T) {
	s := compileYAML(t, `
  resourceRef: {kind: Pod}
  next:
    event: {reason: Ready}
    finalizers: {add: [{value: c}]}
    statusTemplate: "podIP: {{ PodIP }}"
`)
	plan, err := s.Plan(obj(t, finalizedPod), Traits{}, nil)
	if err == nil || !strings.Contains(err.Error(), "PodIP is not available") {
		t.Fatalf("err %v, want PodIP is not available", err)
	}
	if got := ops(plan); got != "event" {
		t.Errorf("plan %q, want only the event", got)
	}
}
