package stage

import (
	"encoding/json"
	"fmt"
	"text/template"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesim/kubesim/apis/kwok/v1alpha1"
)

// step is one compiled step of a Stage: exactly one action. A Stage in the
// older next form compiles to the same steps (event, finalizers, delete or
// status and patches), so both forms take one path.
type step struct {
	field      string // where the step came from, for errors
	event      *v1alpha1.StageEvent
	finalizers *v1alpha1.StageFinalizers
	delete     bool
	patch      *patchStep
	apply      *applyStep
}

type patchStep struct {
	template    *renderer
	root        string
	subresource string
	typ         types.PatchType // empty: decided by the kind (Traits.resolve)
	as          string
}

type applyStep struct {
	template    *renderer
	subresource string
	typ         types.PatchType
	as          string
}

// compileSteps compiles spec.steps, or spec.next into steps.
func compileSteps(s *v1alpha1.Stage) ([]step, error) {
	spec := s.Spec
	if len(spec.Steps) == 0 {
		return compileNext(s.Name, spec.Next)
	}
	if !isZeroNext(spec.Next) {
		return nil, fmt.Errorf("spec.steps and spec.next are exclusive: write the change as steps and drop next")
	}
	var out []step
	for i, st := range spec.Steps {
		field := fmt.Sprintf("spec.steps[%d]", i)
		c := step{field: field, event: st.Event, finalizers: st.Finalizers, delete: st.Delete}
		actions := 0
		for _, set := range []bool{st.Patch != nil, st.Event != nil, st.Finalizers != nil, st.Delete, st.Apply != nil} {
			if set {
				actions++
			}
		}
		if actions != 1 {
			return nil, fmt.Errorf("%s: a step is exactly one of patch, event, finalizers, delete or apply: split it into several steps", field)
		}
		var err error
		switch {
		case st.Patch != nil:
			c.patch, err = compilePatch(s.Name, field+".patch", *st.Patch)
		case st.Apply != nil:
			c.apply, err = compileApply(s.Name, field+".apply", *st.Apply)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// compileNext turns the next form into steps in the order it has always
// had: event, finalizers, then the delete — or the status and patches.
func compileNext(name string, next v1alpha1.StageNext) ([]step, error) {
	var out []step
	if next.Event != nil {
		out = append(out, step{field: "spec.next.event", event: next.Event})
	}
	if next.Finalizers != nil {
		out = append(out, step{field: "spec.next.finalizers", finalizers: next.Finalizers})
	}
	if next.Delete {
		return append(out, step{field: "spec.next.delete", delete: true}), nil
	}
	if t := next.StatusTemplate; t != "" {
		sub := "status"
		if next.StatusSubresource != nil {
			sub = *next.StatusSubresource
		}
		p := v1alpha1.StagePatch{Root: "status", Subresource: sub, Template: t, Impersonation: next.StatusPatchAs}
		c, err := compilePatch(name, "spec.next.statusTemplate", p)
		if err != nil {
			return nil, err
		}
		out = append(out, step{field: "spec.next.statusTemplate", patch: c})
	}
	for i, p := range next.Patches {
		field := fmt.Sprintf("spec.next.patches[%d]", i)
		c, err := compilePatch(name, field+".template", p)
		if err != nil {
			return nil, err
		}
		out = append(out, step{field: field, patch: c})
	}
	return out, nil
}

func compilePatch(name, field string, p v1alpha1.StagePatch) (*patchStep, error) {
	tmpl, err := parseTemplate(name, p.Template)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	if p.Type != nil && *p.Type == v1alpha1.StagePatchTypeApply {
		return nil, fmt.Errorf("%s: type apply is for apply steps: write json, merge or strategic", field)
	}
	return &patchStep{template: tmpl, root: p.Root, subresource: p.Subresource, typ: patchType(p.Type), as: username(p.Impersonation)}, nil
}

func compileApply(name, field string, a v1alpha1.StageApply) (*applyStep, error) {
	if a.Template == "" {
		return nil, fmt.Errorf("%s.template: required: the object to create or update, as YAML", field)
	}
	tmpl, err := parseTemplate(name, a.Template)
	if err != nil {
		return nil, fmt.Errorf("%s.template: %w", field, err)
	}
	typ := types.ApplyPatchType
	if a.Type != nil {
		if typ = patchType(a.Type); typ == "" || typ == types.JSONPatchType {
			return nil, fmt.Errorf("%s.type: %q is not one of apply, merge, strategic", field, *a.Type)
		}
	}
	return &applyStep{template: tmpl, subresource: a.Subresource, typ: typ, as: username(a.Impersonation)}, nil
}

func username(c *v1alpha1.ImpersonationConfig) string {
	if c == nil {
		return ""
	}
	return c.Username
}

func isZeroNext(n v1alpha1.StageNext) bool {
	return n.Event == nil && n.Finalizers == nil && !n.Delete && n.StatusTemplate == "" &&
		len(n.Patches) == 0 && n.StatusSubresource == nil && n.StatusPatchAs == nil
}

// Deletes reports whether the stage deletes its object.
func (s *Stage) Deletes() bool {
	for _, st := range s.steps {
		if st.delete {
			return true
		}
	}
	return false
}

// Plan is what the stage does to obj (as JSON-like maps), with funcs
// providing the templates' context helpers: its steps in order. A
// finalizer change is a merge patch guarded by the resourceVersion read,
// planned only if the finalizers change. Once the object is deleted only
// events follow, as in KWOK.
//
// If a template fails to render, the events planned before it come back
// with the error, to be recorded even then, as KWOK does; the writes do
// not: a stage is carried out whole or not at all, and tried again whole.
func (s *Stage) Plan(obj map[string]any, traits Traits, funcs template.FuncMap) ([]Step, error) {
	var plan []Step
	deleted := false
	for _, st := range s.steps {
		switch {
		case st.event != nil:
			ev := st.event
			plan = append(plan, Step{Op: EmitEvent, Event: Event{Type: eventType(ev.Type), Reason: ev.Reason, Message: ev.Message}})
		case deleted:
		case st.finalizers != nil:
			if p, changed := finalizersPatch(obj, st.finalizers); changed {
				plan = append(plan, Step{Op: SendPatch, Patch: p})
			}
		case st.delete:
			plan, deleted = append(plan, Step{Op: DeleteObject}), true
		case st.patch != nil:
			p, err := st.patch.render(obj, funcs)
			if err != nil {
				return eventsOf(plan), fmt.Errorf("%s: %w", st.field, err)
			}
			plan = append(plan, Step{Op: SendPatch, Patch: traits.resolve(p)})
		case st.apply != nil:
			a, err := st.apply.render(obj, funcs)
			if err != nil {
				return eventsOf(plan), fmt.Errorf("%s.template: %w", st.field, err)
			}
			plan = append(plan, Step{Op: ApplyObject, Apply: a})
		}
	}
	return plan, nil
}

func eventsOf(plan []Step) []Step {
	var out []Step
	for _, s := range plan {
		if s.Op == EmitEvent {
			out = append(out, s)
		}
	}
	return out
}

func (p *patchStep) render(obj map[string]any, funcs template.FuncMap) (Patch, error) {
	body, err := p.template.render(obj, funcs)
	if err != nil {
		return Patch{}, err
	}
	if p.root != "" {
		if p.typ == types.JSONPatchType {
			if body, err = rootJSONPatch(p.root, body); err != nil {
				return Patch{}, err
			}
		} else if body, err = json.Marshal(map[string]json.RawMessage{p.root: body}); err != nil {
			return Patch{}, err
		}
	}
	return Patch{Type: p.typ, Subresource: p.subresource, Data: body, As: p.as}, nil
}

// rootJSONPatch moves a JSON patch's paths under root, as KWOK does.
func rootJSONPatch(root string, body []byte) ([]byte, error) {
	var ops []map[string]any
	if err := json.Unmarshal(body, &ops); err != nil {
		return nil, fmt.Errorf("a json patch renders to a list of operations: %w", err)
	}
	for _, op := range ops {
		if path, ok := op["path"].(string); ok {
			op["path"] = "/" + root + path
		}
	}
	return json.Marshal(ops)
}

// render renders the object an apply step writes and checks it is one:
// apiVersion, kind and a name, and no namespace but obj's own (a Stage
// acting on one namespace's objects writes only there).
func (a *applyStep) render(obj map[string]any, funcs template.FuncMap) (Apply, error) {
	body, err := a.template.render(obj, funcs)
	if err != nil {
		return Apply{}, err
	}
	var out map[string]any
	if err := json.Unmarshal(body, &out); err != nil {
		return Apply{}, fmt.Errorf("renders to %s, not an object", kindOfJSON(body))
	}
	meta, _ := out["metadata"].(map[string]any)
	for _, f := range []struct {
		name string
		v    any
	}{{"apiVersion", out["apiVersion"]}, {"kind", out["kind"]}, {"metadata.name", meta["name"]}} {
		if s, _ := f.v.(string); s == "" {
			return Apply{}, fmt.Errorf("the rendered object has no %s", f.name)
		}
	}
	own, _ := obj["metadata"].(map[string]any)
	ns, _ := own["namespace"].(string)
	if target, _ := meta["namespace"].(string); ns != "" && target != "" && target != ns {
		return Apply{}, fmt.Errorf("metadata.namespace %q: a Stage acting on an object in %q writes only there", target, ns)
	}
	return Apply{Type: a.typ, Subresource: a.subresource, Data: body, Namespace: ns, As: a.as}, nil
}

func kindOfJSON(body []byte) string {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return "something else"
	}
	switch v.(type) {
	case []any:
		return "a list"
	case string:
		return "a string"
	case nil:
		return "nothing"
	default:
		return "a scalar"
	}
}
