package scenario

import (
	"fmt"
	"time"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/cluster"
	"github.com/kubesim/kubesim/internal/clusterclock"
)

// runClock is the clock a run of these scenarios lives on, so that its
// sleeps, waits and timeouts mean what the clusters' clocks mean: the
// timeScale its fresh clusters share, or an existing cluster's clock; nil
// for real time. Scenarios on different clocks go to different runs.
func runClock(files []*File, p *cluster.Provider) (*v1alpha1.Clock, error) {
	var clock *v1alpha1.Clock
	var from string
	for _, f := range files {
		specs := f.Scenario.Clusters
		if f.Scenario.Cluster != nil {
			specs = []v1alpha1.ScenarioCluster{*f.Scenario.Cluster}
		}
		for _, spec := range specs {
			c, err := specClock(spec, clock, p)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.Path, err)
			}
			if from != "" && !clusterclock.Same(c, clock) {
				return nil, fmt.Errorf("%s: timeScale: its clusters' clock (%s) differs from %s's (%s); run them with separate kubesim runs",
					f.Path, describeClock(c), from, describeClock(clock))
			}
			clock, from = c, f.Path
		}
	}
	return clock, nil
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
