package scenario

import (
	"fmt"
	"slices"
	"time"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/cluster"
	"github.com/kubesim/kubesim/internal/clusterclock"
)

// clockGroup is scenarios that share a clock: a run of them lives on it,
// so that its sleeps, waits and timeouts mean what the clusters' clocks
// mean (nil: real time).
type clockGroup struct {
	clock *v1alpha1.Clock
	files []*File
}

// clockGroups groups the scenarios by the clock their clusters share (the
// timeScale of fresh ones, an existing one's clock), in the order each
// clock first comes. A scenario whose clusters are on different clocks
// cannot run: its steps have one clock.
func clockGroups(files []*File, p *cluster.Provider) ([]clockGroup, error) {
	var groups []clockGroup
	for _, f := range files {
		specs := f.Scenario.Clusters
		if f.Scenario.Cluster != nil {
			specs = []v1alpha1.ScenarioCluster{*f.Scenario.Cluster}
		}
		var clock *v1alpha1.Clock
		for i, spec := range specs {
			// A fresh cluster of a scale a group already has joins its clock.
			chosen := clock
			for _, g := range groups {
				if chosen == nil && g.clock != nil && g.clock.Scale == spec.TimeScale {
					chosen = g.clock
				}
			}
			c, err := specClock(spec, chosen, p)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.Path, err)
			}
			if i > 0 && !clusterclock.Same(c, clock) {
				return nil, fmt.Errorf("%s: timeScale: its clusters are on different clocks (%s and %s); give them one timeScale",
					f.Path, describeClock(clock), describeClock(c))
			}
			clock = c
		}
		at := slices.IndexFunc(groups, func(g clockGroup) bool { return clusterclock.Same(g.clock, clock) })
		if at < 0 {
			groups, at = append(groups, clockGroup{clock: clock}), len(groups)
		}
		groups[at].files = append(groups[at].files, f)
	}
	return groups, nil
}

// specClock is the clock of a scenario cluster: an existing one's, or for
// a fresh one of its timeScale, the clock chosen so far if it has that
// scale, else this process's own if it has (the run re-executed itself
// onto it), else a new one.
func specClock(spec v1alpha1.ScenarioCluster, chosen *v1alpha1.Clock, p *cluster.Provider) (*v1alpha1.Clock, error) {
	if spec.Existing != "" {
		return p.Clock(spec.Existing)
	}
	if spec.TimeScale <= 1 {
		return nil, nil
	}
	if chosen != nil && chosen.Scale == spec.TimeScale {
		return chosen, nil
	}
	if own := clusterclock.Own(); own != nil && own.Scale == spec.TimeScale {
		return own, nil
	}
	if err := clusterclock.CheckBuild(); err != nil {
		return nil, err
	}
	now := time.Now().UnixNano()
	return &v1alpha1.Clock{Scale: spec.TimeScale, Epoch: now, Anchor: now}, nil
}

func describeClock(c *v1alpha1.Clock) string {
	if c == nil {
		return "real time"
	}
	return fmt.Sprintf("%d× real time", c.Scale)
}
