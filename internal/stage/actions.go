package stage

import (
	"encoding/json"
	"slices"
	"text/template"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesim/kubesim/apis/kwok/v1alpha1"
)

// A stage's change to an object is a plan: the steps to take, in order.
// The engine decides what they are; the simulator carries them out against
// the API server.

// Op is what a step does.
type Op string

// The steps of a plan.
const (
	EmitEvent    Op = "event"  // record Event on the object
	SendPatch    Op = "patch"  // send Patch
	DeleteObject Op = "delete" // delete the object at once
)

// Step is one action of a plan.
type Step struct {
	Op    Op
	Event Event // for EmitEvent
	Patch Patch // for SendPatch
}

// Event is an Event a stage records on its object.
type Event struct {
	Type    string // Normal or Warning
	Reason  string
	Message string
}

// Patch is a write ready to send: its type and target are decided.
type Patch struct {
	Type        types.PatchType
	Subresource string // empty: the object itself
	Data        []byte // JSON
}

// Subresources is the patch's target as client-go's Patch methods take it.
func (p Patch) Subresources() []string {
	if p.Subresource == "" {
		return nil
	}
	return []string{p.Subresource}
}

// Traits are what a plan needs to know of the object's kind. The zero
// value is a built-in kind with a status subresource (a Node, a Pod).
type Traits struct {
	// Custom marks kinds client-go has no Go types for (custom
	// resources): the API server cannot strategic-merge them, so their
	// patches default to merge patches.
	Custom bool
	// NoStatus marks kinds without a status subresource: their status
	// patches go to the object itself.
	NoStatus bool
}

// Plan is what the stage does to obj (as JSON-like maps), with funcs
// providing the templates' context helpers: its event first; then, if the
// stage deletes, the finalizer change and the delete — finalizers first,
// or the delete waits on them — and nothing else; otherwise the finalizer
// change, then the status template and patches in order. The finalizer
// change is a merge patch guarded by the resourceVersion read, planned
// only if the finalizers change.
//
// If a template fails to render, the steps planned before it (the event)
// come back with the error: the event is recorded even then, as KWOK does.
func (s *Stage) Plan(obj map[string]any, traits Traits, funcs template.FuncMap) ([]Step, error) {
	next := s.Spec.Next
	var plan []Step
	if ev := next.Event; ev != nil {
		plan = append(plan, Step{Op: EmitEvent, Event: Event{Type: eventType(ev.Type), Reason: ev.Reason, Message: ev.Message}})
	}
	var writes []Step
	if p, changed := finalizersPatch(obj, next.Finalizers); changed {
		writes = append(writes, Step{Op: SendPatch, Patch: p})
	}
	if next.Delete {
		return append(append(plan, writes...), Step{Op: DeleteObject}), nil
	}
	rendered, err := s.renderPatches(obj, funcs)
	if err != nil {
		return plan, err
	}
	for _, p := range rendered {
		writes = append(writes, Step{Op: SendPatch, Patch: traits.resolve(p)})
	}
	return append(plan, writes...), nil
}

// resolve decides what a rendered patch left open: its type, if the stage
// named none, and its target, if the kind has no status subresource.
func (t Traits) resolve(p Patch) Patch {
	if p.Type == "" {
		p.Type = types.StrategicMergePatchType
		if t.Custom {
			p.Type = types.MergePatchType
		}
	}
	if p.Subresource == "status" && t.NoStatus {
		p.Subresource = ""
	}
	return p
}

// patchType is the API's name of a stage's patch type; empty if the stage
// names none (or one unknown), to be decided by the kind.
func patchType(t *v1alpha1.StagePatchType) types.PatchType {
	if t == nil {
		return ""
	}
	switch *t {
	case v1alpha1.StagePatchTypeJSONPatch:
		return types.JSONPatchType
	case v1alpha1.StagePatchTypeMergePatch:
		return types.MergePatchType
	case v1alpha1.StagePatchTypeStrategicMergePatch:
		return types.StrategicMergePatchType
	default:
		return ""
	}
}

func eventType(t string) string {
	if t == corev1.EventTypeWarning {
		return t
	}
	return corev1.EventTypeNormal
}

// finalizersPatch computes obj's finalizers after the stage's changes, as
// a merge patch guarded by the resourceVersion read; changed is false if
// they stay as they are.
func finalizersPatch(obj map[string]any, f *v1alpha1.StageFinalizers) (p Patch, changed bool) {
	if f == nil {
		return Patch{}, false
	}
	meta, _ := obj["metadata"].(map[string]any)
	var old []string
	list, _ := meta["finalizers"].([]any)
	for _, v := range list {
		if s, ok := v.(string); ok {
			old = append(old, s)
		}
	}
	var out []string
	if !f.Empty {
		for _, v := range old {
			if !slices.ContainsFunc(f.Remove, func(i v1alpha1.FinalizerItem) bool { return i.Value == v }) {
				out = append(out, v)
			}
		}
	}
	for _, add := range f.Add {
		if !slices.Contains(out, add.Value) {
			out = append(out, add.Value)
		}
	}
	if slices.Equal(old, out) {
		return Patch{}, false
	}
	resourceVersion, _ := meta["resourceVersion"].(string)
	// Strings and string slices always marshal.
	data, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"finalizers": out, "resourceVersion": resourceVersion,
	}})
	return Patch{Type: types.MergePatchType, Data: data}, true
}
