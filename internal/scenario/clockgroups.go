package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/kubesim/kubesim/internal/clusterclock"
	"github.com/kubesim/kubesim/internal/scenario/result"
)

// A process runs on one clock, fixed at its start. Scenarios on several
// clocks run as one `kubesim run` per clock, one after another, each on
// its clock (clusterclock.Env); this process gathers their results and
// reports them once: one summary, one JUnit file, one HTML report.

// runClockGroups runs each group in a `kubesim run` of its own and returns
// every scenario's result, in the order the groups ran.
func runClockGroups(ctx context.Context, groups []clockGroup, o Options) ([]*result.Scenario, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kubesim-run-groups-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var results []*result.Scenario
	for i, g := range groups {
		if ctx.Err() != nil {
			break // interrupted or out of time: the next clocks' scenarios are not run
		}
		out := filepath.Join(dir, fmt.Sprintf("results-%d.json", i))
		args, err := groupArgs(ctx, g, o, out)
		if err != nil {
			return results, err
		}
		if err := runGroup(exe, args, g); err != nil {
			return results, fmt.Errorf("scenarios on %s: %w", describeClock(g.clock), err)
		}
		got, err := readResults(out)
		if err != nil {
			return results, fmt.Errorf("scenarios on %s: %w", describeClock(g.clock), err)
		}
		results = append(results, got...)
	}
	return results, nil
}

// groupArgs are the arguments of the `kubesim run` of one group: this
// run's flags, the time left of its --timeout, and the group's files.
func groupArgs(ctx context.Context, g clockGroup, o Options, resultsTo string) ([]string, error) {
	args := []string{"run", "--results-to=" + resultsTo}
	if o.Cluster != "" {
		args = append(args, "--cluster="+o.Cluster)
	}
	if o.Keep {
		args = append(args, "--keep")
	}
	if o.Kubeconfig != "" {
		args = append(args, "--kubeconfig="+o.Kubeconfig)
	}
	for _, k := range sortedKeys(o.Set) {
		args = append(args, "--set="+k+"="+o.Set[k])
	}
	if d, ok := ctx.Deadline(); ok {
		left := time.Until(d)
		if left <= 0 {
			return nil, context.DeadlineExceeded
		}
		args = append(args, "--timeout="+left.String())
	}
	for _, f := range g.files {
		args = append(args, f.Path)
	}
	return args, nil
}

// runGroup runs `kubesim args…` on the group's clock, its output this
// process's. It has a process group of its own, so that a Ctrl-C reaches
// it once, from here: each interrupt this process gets is passed on, and
// the run winds up and cleans up as it would alone.
func runGroup(exe string, args []string, g clockGroup) error {
	cmd := exec.Command(exe, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(slices.DeleteFunc(os.Environ(), isClockVar), clusterclock.Env(g.clock)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	sigs := make(chan os.Signal, 3)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case s := <-sigs:
				_ = cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	// Its scenarios' failures are in its results; an exit status is
	// something else, which it has said.
	return cmd.Wait()
}

func isClockVar(kv string) bool {
	for _, name := range []string{clusterclock.ScaleEnv, clusterclock.EpochEnv, clusterclock.AnchorEnv} {
		if strings.HasPrefix(kv, name+"=") {
			return true
		}
	}
	return false
}

// writeResults writes a run's results for the run that started it.
func writeResults(path string, results []*result.Scenario) error {
	data, err := json.Marshal(results)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

func readResults(path string) ([]*result.Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("no results: %w", err)
	}
	var results []*result.Scenario
	if err := json.Unmarshal(data, &results); err != nil {
		return nil, fmt.Errorf("its results: %w", err)
	}
	return results, nil
}
