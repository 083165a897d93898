package scenario

import (
	"fmt"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

func init() {
	checkKinds.register(&checkKind{
		name:       "evictions",
		describe:   func(*v1alpha1.Assertion) string { return "evictions of the last disruption" },
		evaluate:   func(v *view, a *v1alpha1.Assertion) (bool, string, string) { return v.evictions(a.Evictions) },
		assertOnly: "they do not change while waiting",
	})
}

// evictions counts what the last drain, evict or deschedule step made.
func (v *view) evictions(e *v1alpha1.EvictionsAssert) (bool, string, string) {
	d := v.t.last
	if d == nil {
		return false, "a drain, evict or deschedule step before", "none ran"
	}
	made, refused := len(d.Made), len(d.Refused)
	ok := (e.Made == nil || *e.Made == made) && (e.Refused == nil || *e.Refused == refused)
	return ok, fmt.Sprintf("made=%s refused=%s", intOrAny(e.Made), intOrAny(e.Refused)),
		fmt.Sprintf("made=%d refused=%d (%s)", made, refused, d.What)
}

func intOrAny(p *int) string {
	if p == nil {
		return "any"
	}
	return fmt.Sprint(*p)
}
