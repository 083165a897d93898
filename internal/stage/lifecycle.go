package stage

import (
	"math/rand/v2"
	"sort"
	"strings"
)

// Lifecycle is the set of stages for one kind of object.
type Lifecycle struct {
	stages []*Stage // sorted by name, so evaluation is deterministic
}

// NewLifecycle returns the stages of stages that apply to group/kind.
func NewLifecycle(group, kind string, stages []*Stage) *Lifecycle {
	l := &Lifecycle{}
	for _, s := range stages {
		if s.ResourceMatches(group, kind) {
			l.stages = append(l.stages, s)
		}
	}
	sort.Slice(l.stages, func(i, j int) bool { return l.stages[i].Name < l.stages[j].Name })
	return l
}

// Signature names the lifecycle's stages and their revisions: equal
// signatures mean the same stages.
func (l *Lifecycle) Signature() string {
	var b strings.Builder
	for _, s := range l.stages {
		b.WriteString(s.Name + "@" + s.Revision + ";")
	}
	return b.String()
}

// Stages lists the lifecycle's stages.
func (l *Lifecycle) Stages() []*Stage { return l.stages }

// Match returns the stage obj is in: of the stages whose selector matches,
// one drawn at random by weight (if no match has weight, any one of them,
// as KWOK draws: stages that may match at once take turns), or nil if none
// matches. Faults are the stages whose expressions
// ran past their limit on obj: there they counted as no match (or, for a
// weight, no value).
func (l *Lifecycle) Match(obj map[string]any) (*Stage, []*Fault) {
	var matched []*Stage
	var weights []int64
	var total int64
	var faults []*Fault
	for _, s := range l.stages {
		ok, err := s.selector.matches(obj)
		if ok {
			var w int64
			w, err = s.weight(obj)
			matched, weights, total = append(matched, s), append(weights, w), total+w
		}
		if err != nil {
			faults = append(faults, s.fault(err))
		}
	}
	if len(matched) == 0 {
		return nil, faults
	}
	if total == 0 {
		return matched[rand.N(len(matched))], faults
	}
	n := rand.N(total)
	for i, w := range weights {
		if n < w {
			return matched[i], faults
		}
		n -= w
	}
	return matched[len(matched)-1], faults
}
