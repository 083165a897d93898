package stage

import (
	"encoding/json"
	"slices"

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
	ApplyObject  Op = "apply"  // create or update another object: Apply
)

// Step is one action of a plan.
type Step struct {
	Op    Op
	Event Event // for EmitEvent
	Patch Patch // for SendPatch
	Apply Apply // for ApplyObject
}

// Apply is a whole object to create, or to patch if it exists (or, with
// Subresource, only to patch), as its Stage rendered it.
type Apply struct {
	Type        types.PatchType // apply (server-side apply), merge or strategic
	Subresource string
	Data        []byte // JSON: apiVersion, kind, metadata.name at least
	// Namespace is where a namespaced object without one goes: the
	// namespace of the object the stage acts on.
	Namespace string
	// As is the user the write is made as; empty: the simulator itself.
	As string
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
	As          string // the user to make the write as; empty: the simulator
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
	case v1alpha1.StagePatchTypeApply:
		return types.ApplyPatchType
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
