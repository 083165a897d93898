package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	policyv1alpha1 "github.com/kubesim/kubesim/apis/policy/v1alpha1"
	"github.com/kubesim/kubesim/internal/manifest"
)

func init() {
	stepKinds.register(manifestsKind("apply", func(s *v1alpha1.Step) *v1alpha1.ApplyStep { return s.Apply }, (*target).apply))
	stepKinds.register(manifestsKind("delete", func(s *v1alpha1.Step) *v1alpha1.ApplyStep { return s.Delete }, (*target).delete))
}

// manifestsKind is a step kind whose field names manifests, and what it
// does with them.
func manifestsKind(name string, field func(*v1alpha1.Step) *v1alpha1.ApplyStep, do func(*target, context.Context, *v1alpha1.ApplyStep) (string, error)) *stepKind {
	return &stepKind{
		name:        name,
		setDefaults: func(s *v1alpha1.Step, dir string) { defaultManifests(field(s), dir) },
		validate:    func(s *v1alpha1.Step, _ clusterNames) error { return validateManifests(field(s)) },
		do:          func(x *stepRun) (string, error) { return do(x.t, x.ctx, field(x.step)) },
	}
}

// defaultManifests puts file in files and resource in resources, and
// makes the files' paths relative to dir, the scenario's directory.
func defaultManifests(a *v1alpha1.ApplyStep, dir string) {
	if a.File != "" {
		a.Files = append([]string{a.File}, a.Files...)
		a.File = ""
	}
	if a.Resource != nil {
		a.Resources = append([]v1alpha1.Object{a.Resource}, a.Resources...)
		a.Resource = nil
	}
	for i, f := range a.Files {
		a.Files[i] = resolve(dir, f)
	}
}

func validateManifests(a *v1alpha1.ApplyStep) error {
	if len(a.Files) == 0 && len(a.Resources) == 0 {
		return fmt.Errorf("give file, files, resource or resources")
	}
	for _, f := range a.Files {
		if _, err := manifest.ReadObjects(f); err != nil {
			return err
		}
	}
	for i, r := range a.Resources {
		if r["apiVersion"] == nil || r["kind"] == nil {
			return fmt.Errorf("resources[%d]: apiVersion and kind are required", i)
		}
	}
	return nil
}

const fieldManager = "kubesim-scenario"

// objects are the manifests an apply or delete step names.
func objects(a *v1alpha1.ApplyStep) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, f := range a.Files {
		objs, err := manifest.ReadObjects(f)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	for _, r := range a.Resources {
		data, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

// resource finds the API resource of an object, and its namespace.
func (t *target) resource(u *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := u.GroupVersionKind()
	m, err := t.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		t.mapper.Reset() // a CRD applied a step ago
		m, err = t.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", gvk.Kind, err)
	}
	if m.Scope.Name() == meta.RESTScopeNameRoot {
		return t.dynamic.Resource(m.Resource), nil
	}
	ns := u.GetNamespace()
	if ns == "" {
		ns = "default"
		u.SetNamespace(ns)
	}
	return t.dynamic.Resource(m.Resource).Namespace(ns), nil
}

func (t *target) apply(ctx context.Context, a *v1alpha1.ApplyStep) (string, error) {
	return t.eachObject(a, func(r dynamic.ResourceInterface, u *unstructured.Unstructured) error {
		t.federationNames(u)
		data, err := u.MarshalJSON()
		if err != nil {
			return err
		}
		if _, err := r.Patch(ctx, u.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: fieldManager, Force: ptr.To(true)}); err != nil {
			return fmt.Errorf("applying %s %s: %w", u.GetKind(), u.GetName(), err)
		}
		return nil
	})
}

// eachObject does act to each object an apply or delete step names, with
// its API resource; it returns them as kind/name, the step's detail.
func (t *target) eachObject(a *v1alpha1.ApplyStep, act func(dynamic.ResourceInterface, *unstructured.Unstructured) error) (string, error) {
	objs, err := objects(a)
	if err != nil {
		return "", err
	}
	var out []string
	for _, u := range objs {
		r, err := t.resource(u)
		if err != nil {
			return "", err
		}
		if err := act(r, u); err != nil {
			return "", err
		}
		out = append(out, strings.ToLower(u.GetKind())+"/"+u.GetName())
	}
	return strings.Join(out, " "), nil
}

// federationNames puts, in a DPDB's federation entries, the name of the
// cluster made for a scenario cluster where the entry names the scenario
// cluster (red): manifests written for clusters called red, blue and green
// work unchanged in a scenario whose clusters get fresh names.
func (t *target) federationNames(u *unstructured.Unstructured) {
	if u.GroupVersionKind().GroupKind() != (schema.GroupKind{Group: policyv1alpha1.GroupName, Kind: policyv1alpha1.Kind}) {
		return
	}
	members, found, err := unstructured.NestedSlice(u.Object, "spec", "federation")
	if !found || err != nil {
		return // the API server's validation will say what is wrong
	}
	for _, m := range members {
		if m, ok := m.(map[string]any); ok {
			if c, ok := m["cluster"].(string); ok && c != "" && t.clusters[c] != "" {
				m["cluster"] = t.clusters[c]
			}
		}
	}
	_ = unstructured.SetNestedSlice(u.Object, members, "spec", "federation")
}

func (t *target) delete(ctx context.Context, a *v1alpha1.ApplyStep) (string, error) {
	return t.eachObject(a, func(r dynamic.ResourceInterface, u *unstructured.Unstructured) error {
		err := r.Delete(ctx, u.GetName(), metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting %s %s: %w", u.GetKind(), u.GetName(), err)
		}
		return nil
	})
}
