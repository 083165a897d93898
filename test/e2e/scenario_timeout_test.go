//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// stepTimeouts has two steps that would run for ever but for their
// timeouts, and a step after them.
const stepTimeouts = `apiVersion: kubesim.io/v1alpha1
kind: Scenario
name: timeouts
cluster: {nodeGroups: [{count: 1}]}
steps:
- name: watch pods
  kubectl: [get, pods, -w]
  timeout: 3s
  continueOnError: true
- name: nap
  sleep: 1h
  timeout: 2s
  continueOnError: true
- name: still runs
  kubectl: [get, nodes]
`

// runTimeout waits for what never comes, for longer than the run may take.
const runTimeout = `apiVersion: kubesim.io/v1alpha1
kind: Scenario
name: runtimeout
cluster: {nodeGroups: [{count: 1}]}
steps:
- name: never
  wait: {pods: {selector: app=none, count: 1}}
  timeout: 10m
- name: not reached
  kubectl: [get, nodes]
`

// runBounded runs kubesim, killing it at limit; it fails the test if the
// run had to be killed.
func (e *env) runBounded(limit time.Duration, args ...string) (result, time.Duration) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(os.Environ(), "KUBESIM_HOME="+e.home, "KUBECONFIG="+e.kubeconfig)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	started := time.Now()
	err := cmd.Run()
	took := time.Since(started)
	r := result{stdout.String(), stderr.String(), 0}
	if ctx.Err() != nil {
		e.t.Fatalf("kubesim %s still running after %s: %s", strings.Join(args, " "), limit, r)
	}
	if exitErr, ok := err.(*exec.ExitError); ok {
		r.code = exitErr.ExitCode()
	} else if err != nil {
		e.t.Fatalf("running kubesim %v: %v", args, err)
	}
	return r, took
}

// stepSeconds is how long the terminal report says a step ran.
func stepSeconds(t *testing.T, out, step string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^  [✓✗] ` + regexp.QuoteMeta(step) + `  ([0-9.]+)s`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no line for step %q:\n%s", step, out)
	}
	s, _ := strconv.ParseFloat(m[1], 64)
	return s
}

// TestScenarioStepTimeouts: a kubectl step that watches (get pods -w) and a
// sleep of an hour each end at their timeout, fail with one line naming the
// step and how long it ran, and the step after them runs; JUnit has both
// failures. A run with --timeout ends at it with the step then running
// failed, the rest not run, its cluster deleted and exit 1.
func TestScenarioStepTimeouts(t *testing.T) {
	e := shortHome(t, newEnv(t))
	dir := t.TempDir()
	file, junit := filepath.Join(dir, "timeouts.yaml"), filepath.Join(dir, "junit.xml")
	writeFile(t, file, []byte(stepTimeouts))
	r, took := e.runBounded(2*time.Minute, "run", file, "--junit", junit)
	t.Logf("%.1fs wall\n%s", took.Seconds(), r.stdout)
	if r.code != 1 {
		t.Fatalf("want exit 1 (two steps timed out): %s", r)
	}
	for _, want := range []string{
		`timeouts.yaml:6: step 1 "watch pods" (kubectl): timed out after 3`,
		`(timeout: 3s)`,
		`timeouts.yaml:10: step 2 "nap" (sleep): timed out after 2`,
		`(timeout: 2s)`,
		"✓ still runs",
		"FAILED timeouts",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if s := stepSeconds(t, r.stdout, "watch pods"); s < 3 || s > 10 {
		t.Errorf("watch pods ran %.1fs, want its 3s timeout and little more", s)
	}
	if s := stepSeconds(t, r.stdout, "nap"); s < 2 || s > 5 {
		t.Errorf("nap ran %.1fs, want its 2s timeout and little more", s)
	}
	x, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(x); !strings.Contains(s, `failures="2"`) || strings.Count(s, "timed out after") < 2 {
		t.Errorf("junit lacks the two timed-out steps:\n%s", s)
	}
	if out := e.must("get", "clusters").stdout; strings.Contains(out, "scn-") {
		t.Errorf("cluster left behind: %s", out)
	}

	// The whole run's bound. Setting up the cluster (a few seconds) is
	// part of it, so it leaves the set-up a generous share.
	file = filepath.Join(dir, "runtimeout.yaml")
	writeFile(t, file, []byte(runTimeout))
	r, took = e.runBounded(2*time.Minute, "run", file, "--timeout", "30s")
	t.Logf("%.1fs wall\n%s\n%s", took.Seconds(), r.stdout, r.stderr)
	if r.code != 1 {
		t.Fatalf("want exit 1 for a run its --timeout ended: %s", r)
	}
	if took < 30*time.Second || took > 90*time.Second {
		t.Errorf("the run took %s, want its 30s --timeout and the clean-up", took)
	}
	if !strings.Contains(r.stdout, `runtimeout.yaml:6: step 1 "never" (wait): stopped by the run's --timeout 30s`) {
		t.Errorf("output lacks the step the run's --timeout stopped:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout, "not reached") || !strings.Contains(r.stdout, "FAILED runtimeout") {
		t.Errorf("want the run failed and the step after the timeout not run:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "--timeout 30s ran out; clusters cleaned up") {
		t.Errorf("stderr: %q", r.stderr)
	}
	if out := e.must("get", "clusters").stdout; strings.Contains(out, "scn-") {
		t.Errorf("cluster left behind after --timeout: %s", out)
	}
}
