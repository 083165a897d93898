package stage

import (
	"fmt"
	"regexp"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubesim/kubesim/apis/kwok/v1alpha1"
)

// Writes is what a Stage writes beyond objects of its own kind, for the
// simulator to be granted exactly that: the kinds its apply steps write
// and the users its writes are made as.
type Writes struct {
	Kinds        []schema.GroupVersionKind
	Subresources map[schema.GroupVersionKind][]string // of Kinds, the ones patched
	Users        []string
}

// topLevel matches a template's top-level apiVersion or kind line, its
// value written literally (quoted or not).
var topLevel = regexp.MustCompile(`(?m)^(apiVersion|kind):[ \t]*["']?([A-Za-z0-9.\-/]+)["']?[ \t]*$`)

// applyKind reads the kind an apply template writes. It must be written
// literally, so that what a Stage may write is known before it runs.
func applyKind(field, template string) (schema.GroupVersionKind, error) {
	found := map[string]string{}
	for _, m := range topLevel.FindAllStringSubmatch(template, -1) {
		found[m[1]] = m[2]
	}
	if found["apiVersion"] == "" || found["kind"] == "" {
		return schema.GroupVersionKind{}, fmt.Errorf("%s: write apiVersion and kind literally, at the top level of the template (the simulator is granted exactly the kinds Stages write)", field)
	}
	gv, err := schema.ParseGroupVersion(found["apiVersion"])
	if err != nil {
		return schema.GroupVersionKind{}, fmt.Errorf("%s: apiVersion: %w", field, err)
	}
	return gv.WithKind(found["kind"]), nil
}

// WritesOf lists what s writes beyond its own kind.
func WritesOf(s *v1alpha1.Stage) (Writes, error) {
	w := Writes{Subresources: map[schema.GroupVersionKind][]string{}}
	addUser := func(c *v1alpha1.ImpersonationConfig) {
		if c != nil && c.Username != "" && !slices.Contains(w.Users, c.Username) {
			w.Users = append(w.Users, c.Username)
		}
	}
	addUser(s.Spec.Next.StatusPatchAs)
	for _, p := range s.Spec.Next.Patches {
		addUser(p.Impersonation)
	}
	for i, st := range s.Spec.Steps {
		if st.Patch != nil {
			addUser(st.Patch.Impersonation)
		}
		a := st.Apply
		if a == nil {
			continue
		}
		addUser(a.Impersonation)
		gvk, err := applyKind(fmt.Sprintf("spec.steps[%d].apply.template", i), a.Template)
		if err != nil {
			return Writes{}, err
		}
		if !slices.Contains(w.Kinds, gvk) {
			w.Kinds = append(w.Kinds, gvk)
		}
		if a.Subresource != "" && !slices.Contains(w.Subresources[gvk], a.Subresource) {
			w.Subresources[gvk] = append(w.Subresources[gvk], a.Subresource)
		}
	}
	slices.Sort(w.Users)
	return w, nil
}
