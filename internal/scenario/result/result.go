// Package result is what came of a scenario run: the records the runner
// fills in and the reporters (package report) read.
package result

import (
	"time"

	"github.com/kubesim/kubesim/internal/explain"
)

// Scenario is what came of one scenario.
type Scenario struct {
	Name     string        `json:"name"`
	File     string        `json:"file"`
	Setup    string        `json:"setup,omitempty"` // an error making the clusters
	Steps    []*Step       `json:"steps"`
	Duration time.Duration `json:"duration"`
	Passed   bool          `json:"passed"`
	// TimeScale is how many times faster than real time the run's clock
	// went (0: real time): its durations are in cluster time.
	TimeScale int32 `json:"timeScale,omitempty"`
	// Autoscalers are the HPAs seen during the run, each sampled as its
	// status changed.
	Autoscalers []*Autoscaler `json:"autoscalers,omitempty"`
	// Fleets are the nodes and Pending pods of each cluster with a node
	// autoscaler, as they changed.
	Fleets []*Fleet `json:"fleets,omitempty"`
}

// Step is what came of one step.
type Step struct {
	Name     string        `json:"name"`
	Action   string        `json:"action"`
	Line     int           `json:"line"`
	Cluster  string        `json:"cluster,omitempty"` // with several clusters
	Start    time.Duration `json:"start"`             // since the scenario began
	Duration time.Duration `json:"duration"`
	Detail   string        `json:"detail,omitempty"`
	// Output is what the step printed (kubectl's), shown under its line.
	Output string `json:"output,omitempty"`
	// Check says the step is itself a check (a wait): a test case of its
	// own even when it passes.
	Check      bool       `json:"check,omitempty"`
	Error      string     `json:"error,omitempty"`
	Assertions []Outcome  `json:"assertions,omitempty"`
	Placement  *Placement `json:"placement,omitempty"`
	// Explanations are the scheduler's reasons for the Pending pods of
	// the placement (the first few), as `kubesim explain -o json` has them.
	Explanations []*explain.Explanation `json:"explanations,omitempty"`
	// Drain is what a drain step did, wave by wave.
	Drain *Drain `json:"drain,omitempty"`
}

// Failed reports whether the step went wrong or one of its assertions
// did not hold.
func (s *Step) Failed() bool {
	if s.Error != "" {
		return true
	}
	for _, a := range s.Assertions {
		if !a.Passed {
			return true
		}
	}
	return false
}

// Outcome is what came of one assertion.
type Outcome struct {
	Name     string `json:"name"`
	Passed   bool   `json:"passed"`
	Expected string `json:"expected,omitempty"`
	Actual   string `json:"actual,omitempty"`
}
