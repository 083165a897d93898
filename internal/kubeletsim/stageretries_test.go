package kubeletsim

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Retries of applying the stages double from a second and stop growing at
// stageRetryCap; a success starts them over.
func TestStageRetriesBackOff(t *testing.T) {
	r := newStageRetries()
	want := time.Second
	for i := range 12 {
		if got := r.When(rebuildKey); got != want {
			t.Fatalf("retry %d: %s, want %s", i+1, got, want)
		}
		want = min(2*want, stageRetryCap)
	}
	r.Forget(rebuildKey)
	if got := r.When(rebuildKey); got != time.Second {
		t.Errorf("after a success: %s, want 1s", got)
	}
}

// The kinds update could not follow because they are not served are told
// apart from other errors, one or several.
func TestKindsNotServed(t *testing.T) {
	thing := schema.GroupKind{Group: "example.com", Kind: "NoSuchThing"}
	other := schema.GroupKind{Group: "example.org", Kind: "Other"}
	notServed := func(gk schema.GroupKind) error {
		return &kindNotServed{kind: gk, err: &meta.NoKindMatchError{GroupKind: gk}}
	}
	got := kindsNotServed(errors.Join(notServed(thing), fmt.Errorf("stages for kind v1/Service: forbidden"), notServed(other)))
	if len(got) != 2 || got[thing] == nil || got[other] == nil {
		t.Errorf("joined: %v, want %s and %s", got, thing, other)
	}
	if got := kindsNotServed(notServed(thing)); len(got) != 1 || got[thing] == nil {
		t.Errorf("alone: %v, want %s", got, thing)
	}
	if got := kindsNotServed(errors.New("connection refused")); len(got) != 0 {
		t.Errorf("another error: %v, want none", got)
	}
}
