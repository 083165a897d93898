package scenario

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/scenario/result"
)

func init() {
	checkKinds.register(&checkKind{
		name: "clusterQueue",
		validate: func(a *v1alpha1.Assertion) error {
			b := a.ClusterQueue
			if b.Name == "" {
				return fmt.Errorf("clusterQueue.name: required, the ClusterQueue to bound")
			}
			if b.MaxAdmitted == nil && b.MaxPending == nil && len(b.MaxInUse) == 0 {
				return fmt.Errorf("clusterQueue: give maxAdmitted, maxPending or maxInUse (such as {gpu: 24})")
			}
			return nil
		},
		describe:   describeQueueBound,
		evaluate:   func(v *view, a *v1alpha1.Assertion) (bool, string, string) { return v.queueBound(a.ClusterQueue) },
		assertOnly: windowOnly,
	})
}

func describeQueueBound(a *v1alpha1.Assertion) string {
	b := a.ClusterQueue
	return fmt.Sprintf("ClusterQueue %s at most %s at once%s", b.Name, strings.Join(queueBoundParts(b), ", "), sinceText(b.Since))
}

func queueBoundParts(b *v1alpha1.ClusterQueueBound) []string {
	var parts []string
	if b.MaxAdmitted != nil {
		parts = append(parts, fmt.Sprintf("%d admitted", *b.MaxAdmitted))
	}
	if b.MaxPending != nil {
		parts = append(parts, fmt.Sprintf("%d pending", *b.MaxPending))
	}
	for _, r := range sortedKeys(b.MaxInUse) {
		q := b.MaxInUse[r]
		parts = append(parts, fmt.Sprintf("%s %s in use", r, q.String()))
	}
	return parts
}

// queueBound checks the ClusterQueue's recorded status over the window:
// the sample in force when it opened and every one since.
func (v *view) queueBound(b *v1alpha1.ClusterQueueBound) (bool, string, string) {
	want := "at most " + strings.Join(queueBoundParts(b), ", ") + " at once"
	r := v.t.run
	if r == nil || len(r.result.Steps) == 0 {
		return false, want, "nothing recorded: no step has run"
	}
	from := r.result.Steps[0].Start
	if b.Since != "" {
		s, ok := stepNamed(r.result.Steps, b.Since)
		if !ok {
			return false, want, fmt.Sprintf("no step named %q has run", b.Since)
		}
		from = s.Start
	}
	to := time.Since(r.began)
	var q *result.Queue
	for _, x := range v.t.queues.queues("", r.began) {
		if x.Name == b.Name {
			q = x
		}
	}
	window := fmt.Sprintf("window %s–%s", secs(from), secs(to))
	if q == nil {
		return false, want, fmt.Sprintf("no ClusterQueue %s recorded (%s)", b.Name, window)
	}
	// The samples the window sees: the last before it opened, and those in it.
	var in []result.QueueSample
	for _, s := range q.Samples {
		if s.At <= from {
			in = []result.QueueSample{s}
		} else {
			in = append(in, s)
		}
	}
	ok := true
	var actual []string
	peak := func(what string, limit float64, value func(result.QueueSample) float64) {
		most, at := 0.0, from
		for _, s := range in {
			if v := value(s); v > most {
				most, at = v, max(s.At, from)
			}
		}
		if most > limit {
			ok = false
		}
		actual = append(actual, fmt.Sprintf("%g %s at %s", most, what, secs(at)))
	}
	if b.MaxAdmitted != nil {
		peak("admitted", float64(*b.MaxAdmitted), func(s result.QueueSample) float64 { return float64(s.Admitted) })
	}
	if b.MaxPending != nil {
		peak("pending", float64(*b.MaxPending), func(s result.QueueSample) float64 { return float64(s.Pending) })
	}
	for _, name := range sortedKeys(b.MaxInUse) {
		limit := b.MaxInUse[name]
		if !slices.ContainsFunc(q.Quotas, func(qu result.QueueQuota) bool { return qu.Resource == name }) {
			return false, want, fmt.Sprintf("ClusterQueue %s has no quota of %s", b.Name, name)
		}
		peak(name+" in use", limit.AsApproximateFloat64(), func(s result.QueueSample) float64 {
			sum := 0.0
			for i, qu := range q.Quotas {
				if qu.Resource == name && i < len(s.Used) {
					sum += s.Used[i]
				}
			}
			return sum
		})
	}
	return ok, want, "most: " + strings.Join(actual, ", ") + " (" + window + ")"
}
