package supervisor

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/kubesim/kubesim/internal/component"
)

// A cluster starts by a plan made from the component table. A barrier
// (component.Barrier: etcd, the API server) is started once everything
// before it in the table is ready and set up, and everything after it
// waits for it to be ready and set up before its own readiness is awaited.
// A component's process starts once the barrier before it is ready —
// or, with StartAfter, once that component is — so past the last barrier
// components come up side by side (a controller-manager building its
// controllers while usage-metrics registers its APIs).

// planStep is when one component starts and when its readiness is awaited.
type planStep struct {
	comp component.Component
	// startAfter must be ready and set up before the process starts;
	// readyAfter before its own readiness and set-up are awaited.
	startAfter, readyAfter []string
}

// startPlan is the plan of comps, the enabled components in table order.
// A StartAfter naming a component the cluster does not run counts for
// nothing.
func startPlan(comps []component.Component) []planStep {
	var plan []planStep
	var before []string // every component so far
	var barrier []string
	for _, comp := range comps {
		step := planStep{comp: comp, startAfter: barrier, readyAfter: barrier}
		switch {
		case comp.Barrier:
			step.startAfter = before
		case comp.StartAfter != "" && slices.Contains(before, comp.StartAfter):
			step.startAfter = []string{comp.StartAfter}
		}
		plan = append(plan, step)
		before = append(before[:len(before):len(before)], comp.Name)
		if comp.Barrier {
			barrier = []string{comp.Name}
		}
	}
	return plan
}

// runPlan starts each component of plan and waits for it to be ready and
// set up, as the plan orders; false means ctx ended (or a wait failed)
// first.
func runPlan(ctx context.Context, plan []planStep, start func(component.Component),
	readyAndSetUp func(context.Context, component.Component) bool) bool {
	done := map[string]chan struct{}{}
	for _, step := range plan {
		done[step.comp.Name] = make(chan struct{})
	}
	waitFor := func(names []string) bool {
		for _, name := range names {
			select {
			case <-done[name]:
			case <-ctx.Done():
				return false
			}
		}
		return true
	}
	var wg sync.WaitGroup
	var stopped atomic.Bool
	for _, step := range plan {
		wg.Go(func() {
			if !waitFor(step.startAfter) {
				stopped.Store(true)
				return
			}
			start(step.comp)
			if !waitFor(step.readyAfter) || !readyAndSetUp(ctx, step.comp) {
				stopped.Store(true)
				return
			}
			close(done[step.comp.Name])
		})
	}
	wg.Wait()
	return !stopped.Load()
}
