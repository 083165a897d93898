package report

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/kubesim/kubesim/internal/scenario/result"
)

// Terminal writes a run's summary as it goes: a line per step as it
// ends, its assertions, and for a failure its error and the placement then.
type Terminal struct {
	Out io.Writer
	// Live redraws a step's line while it runs (Out is a terminal).
	Live bool
}

// ScenarioStarted heads a scenario's summary.
func (t *Terminal) ScenarioStarted(r *result.Scenario) {
	fmt.Fprintf(t.Out, "Scenario %s (%s)\n", r.Name, filepath.Base(r.File))
}

// ClustersReady says the scenario's clusters are up, after how long.
func (t *Terminal) ClustersReady(names []string, after time.Duration) {
	fmt.Fprintf(t.Out, "  ✓ clusters ready: %s (%.1fs)\n", strings.Join(names, ", "), after.Seconds())
}

// ClustersFailed says why the clusters could not be made.
func (t *Terminal) ClustersFailed(r *result.Scenario) {
	fmt.Fprintf(t.Out, "  ✗ clusters: %s\n", r.Setup)
}

// StepStarted shows, live, the step that runs now.
func (t *Terminal) StepStarted(s *result.Step) {
	if t.Live {
		fmt.Fprintf(t.Out, "  … %s", s.Name)
	}
}

// StepDone writes a step's line, its output, its error and assertions,
// and for a failure the placement.
func (t *Terminal) StepDone(r *result.Scenario, s *result.Step) {
	if t.Live {
		fmt.Fprint(t.Out, "\r\033[K") // over the live line
	}
	fmt.Fprintf(t.Out, "  %s %s  %.1fs", mark(!s.Failed()), s.Name, s.Duration.Seconds())
	if s.Cluster != "" {
		fmt.Fprintf(t.Out, "  [%s]", s.Cluster)
	}
	if s.Detail != "" {
		fmt.Fprintf(t.Out, "  %s", oneLine(s.Detail))
	}
	fmt.Fprintln(t.Out)
	if s.Error == "" {
		fmt.Fprint(t.Out, indent(s.Output, "      "))
	} else {
		fmt.Fprintf(t.Out, "      %s:%d: %s\n", filepath.Base(r.File), s.Line, s.Error)
	}
	if s.Drain != nil {
		fmt.Fprint(t.Out, indent(s.Drain.Text(), "      "))
	}
	for _, a := range s.Assertions {
		fmt.Fprintf(t.Out, "      %s %s\n", mark(a.Passed), a.Name)
		if !a.Passed {
			fmt.Fprintf(t.Out, "          expected: %s\n          actual:   %s\n", a.Expected, a.Actual)
		}
	}
	if s.Failed() && s.Placement != nil {
		fmt.Fprintf(t.Out, "      placement:\n%s", indent(s.Placement.Table(), "    "))
	}
}

// ClusterKept says how to look at a cluster the run leaves.
func (t *Terminal) ClusterKept(name string) {
	fmt.Fprintf(t.Out, "  kept cluster %s (kubesim kubectl --name %s get pods -o wide)\n", name, name)
}

// CleanupFailed says a cluster could not be cleaned up.
func (t *Terminal) CleanupFailed(name string, err error) {
	fmt.Fprintf(t.Out, "  cleaning up %s: %v\n", name, err)
}

// ScenarioDone gives the scenario's verdict.
func (t *Terminal) ScenarioDone(r *result.Scenario) {
	for _, f := range r.Fleets {
		head := "nodes"
		if f.Cluster != "" {
			head += " [" + f.Cluster + "]"
		}
		fmt.Fprintf(t.Out, "  %s:\n%s", head, indent(f.Text(), "      "))
	}
	if len(r.Queues) > 0 {
		fmt.Fprintf(t.Out, "  queues:\n")
		for _, q := range r.Queues {
			text := q.Text()
			if q.Cluster != "" {
				text = "[" + q.Cluster + "] " + text
			}
			fmt.Fprint(t.Out, indent(text, "      "))
		}
	}
	verdict := "PASSED"
	if !r.Passed {
		verdict = "FAILED"
	}
	if r.TimeScale > 1 {
		fmt.Fprintf(t.Out, "%s %s in %.1fs of cluster time (%.1fs real at %d×)\n\n", verdict, r.Name,
			r.Duration.Seconds(), r.Duration.Seconds()/float64(r.TimeScale), r.TimeScale)
		return
	}
	fmt.Fprintf(t.Out, "%s %s in %.1fs\n\n", verdict, r.Name, r.Duration.Seconds())
}

func mark(passed bool) string {
	if passed {
		return "✓"
	}
	return "✗"
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func indent(s, by string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = by + l
		}
	}
	return strings.Join(lines, "")
}
