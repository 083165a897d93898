// Package result is what came of a scenario run: the records the runner
// fills in and the reporters (package report) read.
package result

import (
	"fmt"
	"math"
	"strings"
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
	// Queues are Kueue's ClusterQueues, each sampled as its status
	// changed.
	Queues []*Queue `json:"queues,omitempty"`
}

// Queue is one ClusterQueue of Kueue over the run.
type Queue struct {
	Name    string       `json:"name"`
	Cluster string       `json:"cluster,omitempty"`
	Cohort  string       `json:"cohort,omitempty"`
	Quotas  []QueueQuota `json:"quotas"`
	// Samples are the queue's counts and the quota in use, from when
	// each was so (since the scenario began).
	Samples []QueueSample `json:"samples"`
}

// QueueQuota is a ClusterQueue's nominal quota of a resource in a flavor.
type QueueQuota struct {
	Flavor   string  `json:"flavor"`
	Resource string  `json:"resource"`
	Nominal  float64 `json:"nominal"`
}

// QueueSample is a ClusterQueue's status at a moment: its pending and
// admitted Workloads and, for each of its quotas in order, what its
// admitted Workloads use (more than nominal: borrowed from its cohort).
type QueueSample struct {
	At       time.Duration `json:"at"`
	Pending  int32         `json:"pending"`
	Admitted int32         `json:"admitted"`
	Used     []float64     `json:"used"`
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

// Peaks are the most pending and admitted Workloads the queue had at
// once, and the most of each quota in use.
func (q *Queue) Peaks() (pending, admitted int32, used []float64) {
	used = make([]float64, len(q.Quotas))
	for _, s := range q.Samples {
		pending, admitted = max(pending, s.Pending), max(admitted, s.Admitted)
		for i := range used {
			if i < len(s.Used) {
				used[i] = max(used[i], s.Used[i])
			}
		}
	}
	return pending, admitted, used
}

// UseText says the most of each quota in use: "cpu 8 of 10 (default-flavor)".
func (q *Queue) UseText() string {
	_, _, used := q.Peaks()
	parts := make([]string, len(q.Quotas))
	for i, qu := range q.Quotas {
		parts[i] = fmt.Sprintf("%s %g of %g (%s)", qu.Resource, math.Round(used[i]*1000)/1000, qu.Nominal, qu.Flavor)
	}
	return strings.Join(parts, "; ")
}

// Text is the queue's line in a run's summary.
func (q *Queue) Text() string {
	pending, admitted, _ := q.Peaks()
	return fmt.Sprintf("ClusterQueue %s: peak %d pending, %d admitted; most in use: %s\n", q.Name, pending, admitted, q.UseText())
}
