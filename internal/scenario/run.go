package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/kubesim/kubesim/internal/clusterclock"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/cluster"
	"github.com/kubesim/kubesim/internal/scenario/report"
	"github.com/kubesim/kubesim/internal/scenario/result"
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
	// Timeout, if not zero, bounds the whole run (--timeout): the step
	// running when it passes fails, the rest are not run, and the
	// clusters are deleted all the same.
	Timeout time.Duration
	// ResultsTo, if set, is where a run of one clock's scenarios, started
	// by a run of scenarios on several clocks, writes its results for that
	// run to report, instead of reporting them itself.
	ResultsTo string
	// Kubeconfig is the run's --kubeconfig, passed on to such runs.
	Kubeconfig string
	// Live, if set, is called once the run is in the process that runs
	// its scenarios (after it moved onto their clock), and what it
	// returns hears of the run as it goes. A run of scenarios on several
	// clocks, each in a process of its own, has none.
	Live func() (Live, error)
}

// Run loads every file first (so a bad one stops everything before a
// cluster is made), runs each scenario in turn, and writes the reports.
// It returns an error if any step failed.
func Run(ctx context.Context, files []string, o Options) ([]*result.Scenario, error) {
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, o.Timeout, &runTimeout{after: o.Timeout})
		defer cancel()
	}
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
	// A scaled scenario runs in a process on its clusters' clock: this
	// one, started again (nothing was made yet), or, for scenarios on
	// several clocks, one such process per clock, one after another.
	groups, err := clockGroups(loaded, o.Provider)
	if err != nil {
		return nil, err
	}
	if len(groups) > 1 {
		results, err := runClockGroups(ctx, groups, o)
		if err != nil {
			return results, err
		}
		return results, finish(ctx, results, o)
	}
	if len(groups) > 1 && o.Live != nil {
		return nil, fmt.Errorf("--ui: these scenarios run on %d clocks, each in a process of its own; run those of one clock at a time with --ui", len(groups))
	}
	if err := clusterclock.Reexec(groups[0].clock); err != nil {
		return nil, err
	}
	var live Live
	if o.Live != nil {
		if live, err = o.Live(); err != nil {
			return nil, err
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
	var results []*result.Scenario
	for _, f := range loaded {
		results = append(results, runOne(ctx, f, o, live))
		if ctx.Err() != nil {
			break
		}
	}
	if o.ResultsTo != "" {
		return results, writeResults(o.ResultsTo, results)
	}
	return results, finish(ctx, results, o)
}

// finish writes the reports of a run's results and says how it went.
func finish(ctx context.Context, results []*result.Scenario, o Options) error {
	failed := 0
	for _, r := range results {
		if !r.Passed {
			failed++
		}
	}
	var errs []error
	if o.JUnit != "" {
		errs = append(errs, writeFile(o.JUnit, func(w io.Writer) error { return report.WriteJUnit(w, results) }))
	}
	if o.Report != "" {
		errs = append(errs, writeFile(o.Report, func(w io.Writer) error { return report.WriteHTML(w, results) }))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if rt := runTimedOut(ctx); rt != nil {
		return fmt.Errorf("%w; clusters cleaned up", rt)
	}
	if ctx.Err() != nil {
		return errors.New("interrupted; clusters cleaned up")
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d scenarios failed", failed, len(results))
	}
	return nil
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
	term    *report.Terminal
	live    Live // nil: none
	targets map[string]*target
	result  *result.Scenario
	began   time.Time
}

func runOne(ctx context.Context, f *File, o Options, live Live) *result.Scenario {
	s := f.Scenario
	r := &runner{o: o, term: &report.Terminal{Out: o.Out, Live: o.Terminal}, live: live, targets: map[string]*target{}, began: time.Now(),
		result: &result.Scenario{Name: s.Name, File: f.Path}}
	r.term.ScenarioStarted(r.result)
	r.hear().ScenarioStarted(r.result)
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
			if t == nil {
				continue
			}
			cluster := ""
			if len(r.targets) > 1 {
				cluster = name
			}
			r.result.Autoscalers = append(r.result.Autoscalers, t.hpas.autoscalers(cluster, r.began)...)
			r.result.Queues = append(r.result.Queues, t.queues.queues(cluster, r.began)...)
			if f := r.fleetOf(t); f != nil {
				f.Cluster = cluster
				r.result.Fleets = append(r.result.Fleets, f)
			}
		}
		for _, name := range sortedKeys(r.targets) {
			t := r.targets[name]
			if err := t.tearDown(o.Provider, o.Keep); err != nil {
				r.term.CleanupFailed(t.name, err)
			} else if t.made && o.Keep {
				r.term.ClusterKept(t.name)
			}
		}
		r.result.Duration = time.Since(r.began)
		if c := clusterclock.Own(); c != nil {
			r.result.TimeScale = c.Scale
		}
		r.term.ScenarioDone(r.result)
		r.hear().ScenarioDone(r.result)
	}()
	if err := errors.Join(setupErrs...); err != nil {
		r.result.Setup = err.Error()
		r.term.ClustersFailed(r.result)
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
		t.run = r
	}
	sort.Strings(names)
	r.term.ClustersReady(names, time.Since(r.began))
	r.hear().ClustersReady(r.result, names)
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
		k := stepKinds.setOn(s)[0] // validated: exactly one
		var ok bool
		if k.children != nil {
			ok = r.groups(ctx, s, k.children(s), suffix)
		} else {
			ok = r.step(ctx, s, k, suffix)
		}
		if !ok {
			passed = false
			if !s.ContinueOnError {
				return false
			}
		}
	}
	return passed
}

// groups runs the steps s runs in its place, group after group; it
// reports whether all passed. A failed group stops them unless s
// continues on error.
func (r *runner) groups(ctx context.Context, s *v1alpha1.Step, groups []stepGroup, suffix string) bool {
	passed := true
	for _, g := range groups {
		if !r.steps(ctx, g.steps, suffix+g.suffix) {
			passed = false
			if !s.ContinueOnError {
				return false
			}
		}
	}
	return passed
}

// step runs one step of kind k and records what came of it.
func (r *runner) step(ctx context.Context, s *v1alpha1.Step, k *stepKind, suffix string) bool {
	name := s.Name
	if name == "" {
		name = k.name
	}
	name += suffix
	sr := &result.Step{Name: name, Action: k.name, Line: s.Line, Start: time.Since(r.began), Check: k.check}
	if len(r.targets) > 1 {
		sr.Cluster = s.Cluster // which one, where there is a choice
	}
	r.result.Steps = append(r.result.Steps, sr)
	r.term.StepStarted(sr)
	r.hear().StepStarted(r.result, sr)
	t := r.targets[s.Cluster]
	label := fmt.Sprintf("step %d %q (%s)", len(r.result.Steps), name, k.name)
	started := time.Now()
	detail, err := runStep(ctx, k, &stepRun{r: r, t: t, step: s, result: sr, timeout: k.timeoutOf(s)}, label)
	sr.Duration = time.Since(started)
	sr.Detail = detail
	if err != nil {
		sr.Error = err.Error()
	}
	// A failure is pictured, unless the step is on no one cluster; some
	// steps are pictured always.
	if (sr.Failed() && k.scope != onNamedClusters) || k.picture != nil {
		key := ""
		if k.picture != nil {
			key = k.picture(s)
		}
		pictureCtx := ctx
		if runTimedOut(ctx) != nil {
			// The run's time is up, but the picture of where it stopped
			// is worth a few seconds more.
			var cancel context.CancelFunc
			pictureCtx, cancel = context.WithTimeout(context.WithoutCancel(ctx), pictureTimeout)
			defer cancel()
		}
		v := t.view(pictureCtx)
		sr.Placement = v.placement(key)
		sr.Explanations = v.explainPending(maxExplained)
	}
	r.term.StepDone(r.result, sr)
	r.hear().StepDone(r.result, sr)
	return !sr.Failed()
}

// pictureTimeout bounds the picture of a step the run's --timeout stopped.
const pictureTimeout = 10 * time.Second

// errStepTimedOut is the cause of a step's context ending at its timeout.
var errStepTimedOut = errors.New("step timed out")

// runStep runs a step's kind under the step's timeout (x.timeout), on a
// context of its own. A step that runs out fails with one line saying so:
// label (which step) and how long it ran, or, when the run's --timeout
// ended it, the run's timeout. A kind that reports its own timeout (a
// wait's "not after 60s: …", which says what it waited for) keeps its
// words; a step interrupted by Ctrl-C keeps its error.
func runStep(ctx context.Context, k *stepKind, x *stepRun, label string) (string, error) {
	stepCtx, cancel := context.WithTimeoutCause(ctx, x.timeout, errStepTimedOut)
	defer cancel()
	x.ctx = stepCtx
	started := time.Now()
	detail, err := k.do(x)
	if err == nil {
		return detail, nil
	}
	took := roundDuration(time.Since(started))
	if rt := runTimedOut(ctx); rt != nil {
		return detail, fmt.Errorf("%s: stopped by the run's --timeout %s, %s into the step", label, rt.after, took)
	}
	var own *timeoutReport
	if ctx.Err() == nil && context.Cause(stepCtx) == errStepTimedOut && !errors.As(err, &own) {
		return detail, fmt.Errorf("%s: timed out after %s (timeout: %s)", label, took, x.timeout)
	}
	return detail, err
}

// roundDuration rounds how long a step ran for its message: to a tenth of
// a second, or to the millisecond under a second.
func roundDuration(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}

// runTimeout is the cause of a run's context ending at --timeout.
type runTimeout struct{ after time.Duration }

func (e *runTimeout) Error() string { return fmt.Sprintf("--timeout %s ran out", e.after) }

// runTimedOut is the run's timeout if it is what ended ctx, else nil.
func runTimedOut(ctx context.Context) *runTimeout {
	var rt *runTimeout
	if ctx.Err() != nil && errors.As(context.Cause(ctx), &rt) {
		return rt
	}
	return nil
}
