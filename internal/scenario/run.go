package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/cluster"
	"github.com/kubesim/kubesim/internal/explain"
)

// Options are about one `kubesim run`.
type Options struct {
	// Provider makes and deletes clusters; its Out gets their progress.
	Provider *cluster.Provider
	// Cluster, if set, is an existing cluster a one-cluster scenario runs on.
	Cluster string
	// Keep leaves the clusters a run made.
	Keep bool
	// Set overrides parameters (--set k=v).
	Set map[string]string
	// Out gets the summary; Terminal draws each step live.
	Out      io.Writer
	Terminal bool
	// JUnit and Report are files to write, if set.
	JUnit, Report string
}

// Result is what came of one scenario.
type Result struct {
	Name     string        `json:"name"`
	File     string        `json:"file"`
	Setup    string        `json:"setup,omitempty"` // an error making the clusters
	Steps    []*StepResult `json:"steps"`
	Duration time.Duration `json:"duration"`
	Passed   bool          `json:"passed"`
}

// StepResult is what came of one step.
type StepResult struct {
	Name       string        `json:"name"`
	Action     string        `json:"action"`
	Line       int           `json:"line"`
	Cluster    string        `json:"cluster,omitempty"` // with several clusters
	Start      time.Duration `json:"start"`             // since the scenario began
	Duration   time.Duration `json:"duration"`
	Detail     string        `json:"detail,omitempty"`
	Error      string        `json:"error,omitempty"`
	Assertions []Outcome     `json:"assertions,omitempty"`
	Placement  *Placement    `json:"placement,omitempty"`
	// Explanations are the scheduler's reasons for the Pending pods of
	// the placement (the first few), as `kubesim explain -o json` has them.
	Explanations []*explain.Explanation `json:"explanations,omitempty"`
}

// Run loads every file first (so a bad one stops everything before a
// cluster is made), runs each scenario in turn, and writes the reports.
// It returns an error if any step failed.
func Run(ctx context.Context, files []string, o Options) ([]*Result, error) {
	used := map[string]bool{}
	var loaded []*File
	for _, f := range files {
		file, err := Load(f, o.Set, used)
		if err != nil {
			return nil, err
		}
		if o.Cluster != "" {
			if len(file.Scenario.Clusters) > 0 {
				return nil, fmt.Errorf("%s: --cluster: the scenario has several clusters; --cluster runs a one-cluster scenario", f)
			}
			file.Scenario.Cluster = &v1alpha1.ScenarioCluster{Existing: o.Cluster}
		}
		loaded = append(loaded, file)
	}
	for _, k := range sortedKeys(o.Set) {
		if !used[k] {
			return nil, fmt.Errorf("--set %s: no scenario has a parameter %s (declare it under parameters:)", k, k)
		}
	}
	if !o.Keep {
		// Fresh clusters' contexts go to a kubeconfig of the run's own, so
		// the user's current context is left alone.
		dir, err := os.MkdirTemp("", "kubesim-run-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		p := *o.Provider
		p.Kubeconfig = filepath.Join(dir, "kubeconfig")
		o.Provider = &p
	}
	var results []*Result
	failed := 0
	for _, f := range loaded {
		r := runOne(ctx, f, o)
		results = append(results, r)
		if !r.Passed {
			failed++
		}
		if ctx.Err() != nil {
			break
		}
	}
	var errs []error
	if o.JUnit != "" {
		errs = append(errs, writeFile(o.JUnit, func(w io.Writer) error { return WriteJUnit(w, results) }))
	}
	if o.Report != "" {
		errs = append(errs, writeFile(o.Report, func(w io.Writer) error { return WriteReport(w, results) }))
	}
	if err := errors.Join(errs...); err != nil {
		return results, err
	}
	if ctx.Err() != nil {
		return results, errors.New("interrupted; clusters cleaned up")
	}
	if failed > 0 {
		return results, fmt.Errorf("%d of %d scenarios failed", failed, len(results))
	}
	return results, nil
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// runner runs one scenario.
type runner struct {
	o       Options
	out     io.Writer
	targets map[string]*target
	result  *Result
	began   time.Time
	count   int
}

func runOne(ctx context.Context, f *File, o Options) *Result {
	s := f.Scenario
	r := &runner{o: o, out: o.Out, targets: map[string]*target{}, began: time.Now(),
		result: &Result{Name: s.Name, File: f.Path}}
	fmt.Fprintf(r.out, "Scenario %s (%s)\n", s.Name, filepath.Base(f.Path))
	specs := s.Clusters
	if s.Cluster != nil {
		specs = []v1alpha1.ScenarioCluster{*s.Cluster}
	}
	// Clusters are made at once, side by side.
	var mu sync.Mutex
	var wg sync.WaitGroup
	var setupErrs []error
	for i := range specs {
		wg.Add(1)
		go func(spec *v1alpha1.ScenarioCluster) {
			defer wg.Done()
			t, err := setUp(ctx, o.Provider, spec, s.Name)
			mu.Lock()
			defer mu.Unlock()
			r.targets[spec.Name] = t
			if err != nil {
				setupErrs = append(setupErrs, err)
			}
		}(&specs[i])
	}
	wg.Wait()
	defer func() {
		for _, name := range sortedKeys(r.targets) {
			t := r.targets[name]
			if err := t.tearDown(o.Provider, o.Keep); err != nil {
				fmt.Fprintf(r.out, "  cleaning up %s: %v\n", t.name, err)
			} else if t.made && o.Keep {
				fmt.Fprintf(r.out, "  kept cluster %s (kubesim kubectl --name %s get pods -o wide)\n", t.name, t.name)
			}
		}
		r.result.Duration = time.Since(r.began)
		verdict := "PASSED"
		if !r.result.Passed {
			verdict = "FAILED"
		}
		fmt.Fprintf(r.out, "%s %s in %.1fs\n\n", verdict, s.Name, r.result.Duration.Seconds())
	}()
	if err := errors.Join(setupErrs...); err != nil {
		r.result.Setup = err.Error()
		fmt.Fprintf(r.out, "  ✗ clusters: %v\n", err)
		return r.result
	}
	var names []string
	made := map[string]string{}
	for key, t := range r.targets {
		names = append(names, t.name)
		made[key] = t.name
	}
	for _, t := range r.targets {
		t.clusters = made
	}
	sort.Strings(names)
	fmt.Fprintf(r.out, "  ✓ clusters ready: %s (%.1fs)\n", strings.Join(names, ", "), time.Since(r.began).Seconds())
	r.result.Passed = r.steps(ctx, s.Steps, "")
	return r.result
}

// steps runs steps in order; it reports whether all passed. A failed step
// stops them unless it continues on error.
func (r *runner) steps(ctx context.Context, steps []v1alpha1.Step, suffix string) bool {
	passed := true
	for i := range steps {
		s := &steps[i]
		if ctx.Err() != nil {
			return false
		}
		if s.Foreach != nil {
			v := s.Foreach.Var
			if v == "" {
				v = "item"
			}
			for j, iteration := range s.Iterations {
				if !r.steps(ctx, iteration, fmt.Sprintf("%s [%s=%s]", suffix, v, s.Foreach.Values[j])) {
					passed = false
					if !s.ContinueOnError {
						return false
					}
				}
			}
			continue
		}
		if !r.step(ctx, s, suffix) {
			passed = false
			if !s.ContinueOnError {
				return false
			}
		}
	}
	return passed
}

func (r *runner) step(ctx context.Context, s *v1alpha1.Step, suffix string) bool {
	r.count++
	action := s.Actions()[0]
	name := s.Name
	if name == "" {
		name = action
	}
	name += suffix
	sr := &StepResult{Name: name, Action: action, Line: s.Line, Start: time.Since(r.began)}
	if len(r.targets) > 1 {
		sr.Cluster = s.Cluster // which one, where there is a choice
	}
	r.result.Steps = append(r.result.Steps, sr)
	if r.o.Terminal {
		fmt.Fprintf(r.out, "  … %s", name)
	}
	t := r.targets[s.Cluster]
	timeout := time.Minute
	if s.Timeout != nil {
		timeout = s.Timeout.Duration
	}
	started := time.Now()
	detail, err := r.do(ctx, t, s, sr, timeout)
	sr.Duration = time.Since(started)
	if detail != "" {
		sr.Detail = detail
	}
	failed := err != nil
	for _, a := range sr.Assertions {
		failed = failed || !a.Passed
	}
	if err != nil {
		sr.Error = err.Error()
	}
	if (failed && action != "federate") || action == "assert" || action == "wait" || action == "drain" || action == "deschedule" {
		v := t.view(ctx)
		sr.Placement = v.placement(topologyKey(s))
		sr.Explanations = v.explainPending(maxExplained)
	}
	mark := "✓"
	if failed {
		mark = "✗"
	}
	if r.o.Terminal {
		fmt.Fprint(r.out, "\r\033[K")
	}
	fmt.Fprintf(r.out, "  %s %s  %.1fs", mark, name, sr.Duration.Seconds())
	if sr.Cluster != "" {
		fmt.Fprintf(r.out, "  [%s]", sr.Cluster)
	}
	if detail != "" {
		fmt.Fprintf(r.out, "  %s", oneLine(detail))
	}
	fmt.Fprintln(r.out)
	if action == "kubectl" && err == nil {
		fmt.Fprint(r.out, indent(sr.Detail, "      "))
	}
	if err != nil {
		fmt.Fprintf(r.out, "      %s:%d: %v\n", filepath.Base(r.result.File), s.Line, err)
	}
	for _, a := range sr.Assertions {
		m := "✓"
		if !a.Passed {
			m = "✗"
		}
		fmt.Fprintf(r.out, "      %s %s\n", m, a.Name)
		if !a.Passed {
			fmt.Fprintf(r.out, "          expected: %s\n          actual:   %s\n", a.Expected, a.Actual)
		}
	}
	if failed && sr.Placement != nil {
		fmt.Fprintf(r.out, "      placement:\n%s", indent(sr.Placement.Table(), "    "))
	}
	return !failed
}

func indent(s, by string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = by + l
		}
	}
	return strings.Join(lines, "")
}

// topologyKey is the key a step's picture groups nodes by: its spread's.
func topologyKey(s *v1alpha1.Step) string {
	for _, a := range s.Assert {
		if a.Spread != nil {
			return a.Spread.TopologyKey
		}
	}
	if s.Wait != nil && s.Wait.Spread != nil {
		return s.Wait.Spread.TopologyKey
	}
	return ""
}

func (r *runner) do(ctx context.Context, t *target, s *v1alpha1.Step, sr *StepResult, timeout time.Duration) (string, error) {
	switch {
	case s.Apply != nil:
		return t.apply(ctx, s.Apply)
	case s.Delete != nil:
		return t.delete(ctx, s.Delete)
	case s.Scale != nil:
		return t.scale(ctx, s.Scale, timeout)
	case s.Label != nil:
		return t.patchNodes(ctx, s.Label.Nodes, map[string]any{"metadata": map[string]any{"labels": s.Label.Labels}})
	case s.Taint != nil:
		return t.taint(ctx, s.Taint)
	case s.Cordon != nil:
		return t.patchNodes(ctx, *s.Cordon, map[string]any{"spec": map[string]any{"unschedulable": true}})
	case s.Uncordon != nil:
		return t.patchNodes(ctx, *s.Uncordon, map[string]any{"spec": map[string]any{"unschedulable": nil}})
	case s.Drain != nil:
		return t.drain(ctx, s.Drain, timeout)
	case s.Evict != nil:
		return t.evictOne(ctx, s.Evict)
	case s.NodeStop != nil:
		return t.setStopped(ctx, *s.NodeStop, true)
	case s.NodeStart != nil:
		return t.setStopped(ctx, *s.NodeStart, false)
	case s.Deschedule != nil:
		return t.deschedule(ctx, s.Deschedule)
	case s.Wait != nil:
		if s.Wait.DPDB != nil {
			t.watchDPDB()
		}
		var last Outcome
		err := t.until(ctx, timeout, func() (bool, string) {
			last = t.checkIn(t.cachedView(ctx), &s.Wait.Assertion)
			return last.Passed, fmt.Sprintf("%s: expected %s, got %s", last.Name, last.Expected, last.Actual)
		})
		return last.Name, err
	case s.Sleep != nil:
		select {
		case <-time.After(s.Sleep.Duration):
			return "", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	case s.Assert != nil:
		passed := 0
		for i := range s.Assert {
			o := t.check(ctx, &s.Assert[i])
			sr.Assertions = append(sr.Assertions, o)
			if o.Passed {
				passed++
			}
		}
		return fmt.Sprintf("%d/%d passed", passed, len(s.Assert)), nil
	case s.Federate != nil:
		return r.federate(ctx, s.Federate)
	case s.Kubectl != nil:
		out, err := t.kubectl(ctx, r.o.Provider.Home, s.Kubectl)
		sr.Detail = out // printed under the step's line
		return "", err
	}
	return "", errors.New("no action")
}

// federate wires the named scenario clusters to each other with the
// library call behind `kubesim federate`.
func (r *runner) federate(ctx context.Context, names []string) (string, error) {
	made := make([]string, len(names))
	for i, n := range names {
		made[i] = r.targets[n].name
	}
	return strings.Join(names, ", "), r.o.Provider.Federate(ctx, made)
}
