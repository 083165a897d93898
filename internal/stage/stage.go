// Package stage evaluates Stages: which stage an object is in, when its
// change is due, and what that change is, as a plan of steps. It knows
// nothing of clients or informers; the kubelet simulator feeds it objects
// and carries out its plans.
package stage

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesim/kubesim/apis/kwok/v1alpha1"
)

// Stage is a Stage compiled for evaluation: jq expressions parsed, the
// templates parsed.
type Stage struct {
	Name string
	Spec v1alpha1.StageSpec
	// Revision tells versions of a stage apart: BuiltinRevision, or a
	// Stage object's resourceVersion.
	Revision string
	// UID is the Stage object's, to report its faults on; empty for
	// built-in stages.
	UID types.UID

	selector     *selector
	weightFrom   valueExpr
	durationFrom valueExpr
	jitterFrom   valueExpr
	steps        []step
}

// Compile checks a Stage and prepares it for evaluation. Errors name the
// field at fault.
func Compile(s *v1alpha1.Stage) (*Stage, error) {
	c := &Stage{Name: s.Name, Spec: s.Spec}
	if s.Spec.ResourceRef.Kind == "" {
		return nil, fmt.Errorf("stage %s: spec.resourceRef.kind: required", s.Name)
	}
	var err error
	if c.selector, err = compileSelector(s.Spec.Selector); err != nil {
		return nil, fmt.Errorf("stage %s: %w", s.Name, err)
	}
	exprs := []exprField{{"spec.weightFrom", s.Spec.WeightFrom, &c.weightFrom}}
	if d := s.Spec.Delay; d != nil {
		exprs = append(exprs,
			exprField{"spec.delay.durationFrom", d.DurationFrom, &c.durationFrom},
			exprField{"spec.delay.jitterDurationFrom", d.JitterDurationFrom, &c.jitterFrom})
	}
	for _, e := range exprs {
		if *e.dst, err = compileValue(e.field, e.src); err != nil {
			return nil, fmt.Errorf("stage %s: %w", s.Name, err)
		}
	}
	if c.steps, err = compileSteps(s); err != nil {
		return nil, fmt.Errorf("stage %s: %w", s.Name, err)
	}
	if _, err := WritesOf(s); err != nil {
		return nil, fmt.Errorf("stage %s: %w", s.Name, err)
	}
	return c, nil
}

// exprField is an optional value expression of a Stage and where its
// compiled form goes.
type exprField struct {
	field string
	src   *v1alpha1.ExpressionFromSource
	dst   *valueExpr
}

// maxWeight bounds stage weights, so no number of stages can overflow
// their sum.
const maxWeight = 1 << 20

// weight is the stage's weight for obj, in [0, maxWeight]: weightFrom if
// it yields a number, else the fixed weight.
func (s *Stage) weight(obj map[string]any) (int64, error) {
	w := int64(s.Spec.Weight)
	var err error
	if s.weightFrom != nil {
		var v string
		v, err = s.weightFrom.first(obj)
		if n, parseErr := strconv.ParseInt(v, 10, 64); parseErr == nil {
			w = n
		} else if f, parseErr := strconv.ParseFloat(v, 64); parseErr == nil {
			w = int64(f)
		}
	}
	return min(max(w, 0), maxWeight), err
}

// Delay returns how long to wait before applying the stage to obj, and a
// fault if an expression of it ran past its limit (and so counted as no
// value) on obj.
func (s *Stage) Delay(obj map[string]any, now time.Time) (time.Duration, *Fault) {
	lo, hi, fault := s.DelayRange(obj, now)
	if hi > lo {
		lo += rand.N(hi - lo)
	}
	return lo, fault
}

// DelayRange is the interval the delay is drawn from, evenly: the
// duration, up to the jitter duration if there is one. As in KWOK, a
// jitter duration below the duration replaces it (a pod whose deletion
// time has passed goes at once).
func (s *Stage) DelayRange(obj map[string]any, now time.Time) (lo, hi time.Duration, _ *Fault) {
	d := s.Spec.Delay
	if d == nil {
		return 0, 0, nil
	}
	base, _, baseErr := durationOf(d.DurationMilliseconds, s.durationFrom, obj, now)
	jitter, hasJitter, jitterErr := durationOf(d.JitterDurationMilliseconds, s.jitterFrom, obj, now)
	fault := s.fault(cmp.Or(baseErr, jitterErr))
	if !hasJitter {
		return base, base, fault
	}
	if jitter < base {
		return jitter, jitter, fault
	}
	return base, jitter, fault
}

// durationOf reads a delay: from the expression if it yields one,
// otherwise from the fixed milliseconds; ok is false if neither has one.
func durationOf(ms *int64, e valueExpr, obj map[string]any, now time.Time) (_ time.Duration, ok bool, _ error) {
	var err error
	if e != nil {
		var v string
		v, err = e.first(obj)
		if d, ok := parseDelay(v, now); ok {
			return max(d, 0), true, nil
		}
	}
	if ms == nil {
		return 0, false, err
	}
	return max(time.Duration(*ms)*time.Millisecond, 0), true, err
}

// parseDelay reads the delay an expression yields: a duration such as
// "5s", a number of milliseconds, or a time to wait until.
func parseDelay(v string, now time.Time) (time.Duration, bool) {
	if d, err := time.ParseDuration(v); err == nil {
		return d, true
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.Duration(n) * time.Millisecond, true
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t.Sub(now), true
	}
	return 0, false
}

// fault is err, an expression of the stage running past its limit, as a
// Fault; nil if err is.
func (s *Stage) fault(err error) *Fault {
	if err == nil {
		return nil
	}
	return &Fault{Stage: s, Err: err}
}

// ResourceMatches reports whether the stage is for the given group/kind.
// KWOK manifests write the core group as "v1"; both it and "" mean core.
func (s *Stage) ResourceMatches(group, kind string) bool {
	ref := s.Spec.ResourceRef
	return ref.Kind == kind && normalizeGroup(ref.APIGroup) == normalizeGroup(group)
}

func normalizeGroup(g string) string {
	if g == "v1" {
		return ""
	}
	// "apps/v1" style: the group is what comes before the version.
	if i := strings.Index(g, "/"); i >= 0 {
		return g[:i]
	}
	return g
}

// GroupKind is the group (core: "") and kind the stage applies to.
func (s *Stage) GroupKind() (group, kind string) { return RefGroupKind(s.Spec.ResourceRef) }

// RefGroupKind is the group (core: "") and kind a Stage's resourceRef names.
func RefGroupKind(ref v1alpha1.StageResourceRef) (group, kind string) {
	return normalizeGroup(ref.APIGroup), ref.Kind
}
