package scenario

import "github.com/kubesim/kubesim/internal/scenario/result"

// Live hears of a run as it goes, as the terminal does: `kubesim run
// --ui` shows it on a page. Its methods are called from the run's
// goroutine, and must not block it.
type Live interface {
	ScenarioStarted(r *result.Scenario)
	// ClustersReady names the kubesim clusters the scenario runs on.
	ClustersReady(r *result.Scenario, clusters []string)
	StepStarted(r *result.Scenario, s *result.Step)
	StepDone(r *result.Scenario, s *result.Step)
	// ScenarioDone comes once the scenario's clusters are deleted (or
	// kept: Options.Keep).
	ScenarioDone(r *result.Scenario)
}

// noLive hears nothing.
type noLive struct{}

func (noLive) ScenarioStarted(*result.Scenario)           {}
func (noLive) ClustersReady(*result.Scenario, []string)   {}
func (noLive) StepStarted(*result.Scenario, *result.Step) {}
func (noLive) StepDone(*result.Scenario, *result.Step)    {}
func (noLive) ScenarioDone(*result.Scenario)              {}

// hear is the run's Live, or one that hears nothing.
func (r *runner) hear() Live {
	if r.live == nil {
		return noLive{}
	}
	return r.live
}
