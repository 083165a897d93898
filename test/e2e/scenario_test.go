//go:build e2e

package e2e

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestScenarioExamples runs each shipped example on a fresh cluster of
// its own; each must pass, and leave no cluster behind. They run one
// after another, beside the other parallel tests.
func TestScenarioExamples(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"pdb-drain", "control-plane-upgrade", "topology-spread", "zones-schedule-anyway", "node-failure-descheduler", "slow-start-rollout", "dpdb-ring", "upgrade-rehearsal", "gpu-packing", "hpa-spike", "queue-worker"} {
		t.Run(name, func(t *testing.T) { runExample(t, shortHome(t, newEnv(t)), name) })
	}
}

// TestScenarioExampleTimings runs the example that holds upstream's
// timings on a scaled clock, alone: a busy machine stretches them.
func TestScenarioExampleTimings(t *testing.T) {
	runExample(t, shortHome(t, newEnvAlone(t)), "node-failure-upstream-timings")
}

// runExample runs examples/NAME.yaml with args, which must pass and leave
// no cluster behind.
func runExample(t *testing.T, e *env, name string, args ...string) {
	var set []string
	if name == "control-plane-upgrade" {
		from, to := upgradeBuilt(t, e)
		set = []string{"--set", "from=" + from, "--set", "to=" + to}
	}
	started := time.Now()
	r := e.run(append([]string{"run", filepath.Join("..", "..", "examples", name+".yaml")}, append(set, args...)...)...)
	t.Logf("%s: %.1fs wall\n%s", name, time.Since(started).Seconds(), r.stdout)
	if r.code != 0 || !strings.Contains(r.stdout, "PASSED "+name) {
		t.Fatalf("example %s did not pass: %s", name, r)
	}
	if out := e.must("get", "clusters").stdout + e.must("get", "clusters").stderr; strings.Contains(out, "scn-") {
		t.Errorf("the run's cluster was left behind: %s", out)
	}
}

// upgradeBuilt is an upgrade this build can run, from one minor to the
// next, preferring one to or from kubesim's own; the test is skipped,
// saying so, where none is built (CI builds one other version a run).
func upgradeBuilt(t *testing.T, e *env) (from, to string) {
	own, others := builtVersions(t, e)
	for _, o := range others {
		switch {
		case nextMinor(minor(o)) == minor(own):
			return minor(o), minor(own)
		case nextMinor(minor(own)) == minor(o):
			return minor(own), minor(o)
		}
	}
	t.Skipf("no version next to kubesim's own %s is built (built: %v)", own, others)
	return "", ""
}

// shortHome moves e's kubesim home to a short path: a cluster's unix
// sockets live under it, and the subtests' temporary directories are long.
func shortHome(t *testing.T, e *env) *env {
	dir, err := os.MkdirTemp("", "scn")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) }) // after newEnv's delete --all, which runs first
	e.home = dir
	return e
}

// failing is a scenario whose second assertion cannot hold, on a cluster
// given by --cluster.
const failing = `apiVersion: kubesim.io/v1alpha1
kind: Scenario
name: failing
parameters: {replicas: "4"}
steps:
- apply:
    resource:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web}
      spec:
        replicas: ${replicas}
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec: {containers: [{name: c, image: nginx}]}
- apply:
    resource: {apiVersion: v1, kind: Pod, metadata: {name: lonely}, spec: {nodeSelector: {disk: none-has-it}, containers: [{name: c, image: nginx}]}}
- wait: {pods: {selector: app=web, phase: Running, ready: true, count: "${replicas}"}}
  timeout: 60s
- assert:
  - pods: {selector: app=web, phase: Running, count: "${replicas}"}
  - name: all on one node
    perNode: {selector: app=web, max: 0}
  - object: {apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, spec: {replicas: "${replicas}"}}
- name: not reached
  sleep: 1s
`

// TestScenarioFailureReport: bad files are refused with their line before
// anything runs; a failing assertion on an existing cluster (--cluster,
// which the run leaves running) exits 1 and prints expected, actual and the
// placement; the JUnit file has the failure; the HTML report renders in
// headless Chromium without script errors, and its screenshot is saved.
func TestScenarioFailureReport(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	writeFile(t, bad, []byte("apiVersion: kubesim.io/v1alpha1\nkind: Scenario\nsteps:\n- drain: {node: a, expct: blocked}\n"))
	r := e.fails(`bad.yaml:4: unknown field "steps[0].drain.expct"`, "run", bad)
	if strings.Contains(r.stdout, "clusters ready") {
		t.Errorf("a cluster was made for a bad file: %s", r)
	}
	e.fails("--set nope: no scenario has a parameter nope", "run", "--set", "nope=1", filepath.Join("..", "..", "examples", "pdb-drain.yaml"))

	e.createCluster("mine", "--nodes", "3")
	file, junit, report := filepath.Join(dir, "failing.yaml"), filepath.Join(dir, "junit.xml"), filepath.Join(dir, "report.html")
	writeFile(t, file, []byte(failing))
	r = e.run("run", file, "--cluster", "mine", "--set", "replicas=5", "--junit", junit, "--report", report)
	if r.code != 1 {
		t.Fatalf("want exit 1 for a failed assertion: %s", r)
	}
	for _, want := range []string{"✓ pods app=web phase=Running = 5", "✗ all on one node", "expected: at most 0 per node", "placement:", "node-000000", "web×", "FAILED failing"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "not reached") {
		t.Errorf("a step after the failure ran:\n%s", r.stdout)
	}
	if !strings.Contains(e.must("get", "clusters").stdout, "mine") {
		t.Errorf("--cluster mine was deleted by the run")
	}
	x, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(x); !strings.Contains(s, `tests="4" failures="1"`) || !strings.Contains(s, `<failure message="all on one node">`) {
		t.Errorf("junit:\n%s", s)
	}

	dom := renderReport(t, report, "1300,1600", "scenario-report.png")
	if !strings.Contains(dom, "0 of 1 scenarios passed") || !strings.Contains(dom, "<svg") {
		t.Errorf("the report lacks its summary or pictures")
	}
	if !strings.Contains(dom, "why <b>lonely</b> is Unschedulable") || !strings.Contains(dom, "NodeAffinity: node(s) didn") {
		t.Errorf("the report lacks the scheduler's explanation of the Pending pod")
	}
}

// renderReport loads an HTML report in headless Chromium as a reader
// would, at a window size such as "1300,1600": it fails t unless the
// report's script ran cleanly, saves a screenshot named name (in
// $KUBESIM_ARTIFACTS, else beside the report) and returns the rendered DOM.
func renderReport(t *testing.T, report, window, name string) string {
	t.Helper()
	chromium := ensureChromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	url := "file://" + report
	flags := []string{"--headless", "--no-sandbox", "--disable-gpu", "--window-size=" + window}
	out, err := exec.CommandContext(ctx, chromium, append(flags, "--dump-dom", url)...).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	dom := string(out)
	if !strings.Contains(dom, `data-rendered="true"`) || strings.Contains(dom, `data-script-errors="`) {
		t.Errorf("the report's script did not run cleanly: %.500s", dom)
	}
	shots := os.Getenv("KUBESIM_ARTIFACTS")
	if shots == "" {
		shots = filepath.Dir(report)
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(shots, name)
	if out, err := exec.CommandContext(ctx, chromium, append(flags, "--screenshot="+shot, url)...).CombinedOutput(); err != nil {
		t.Fatalf("chromium --screenshot: %v\n%s", err, out)
	}
	if info, err := os.Stat(shot); err != nil || info.Size() < 10_000 {
		t.Fatalf("screenshot %s: %v", shot, err)
	}
	t.Logf("report screenshot: %s", shot)
	return dom
}

// ensureChromium finds Debian's chromium, installing it with apt (sudo
// when not root) if it is missing.
func ensureChromium(t testing.TB) string {
	t.Helper()
	if path, err := exec.LookPath("chromium"); err == nil {
		return path
	}
	sudo := []string{}
	if os.Geteuid() != 0 {
		sudo = []string{"sudo", "-n"}
	}
	for _, args := range [][]string{{"apt-get", "update", "-qq"}, {"apt-get", "install", "-y", "-qq", "chromium"}} {
		args = append(sudo, args...)
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("installing chromium (%s): %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// TestScenarioInterrupt: Ctrl-C in the middle of a step ends the run
// non-zero and deletes the cluster it made, processes and all; so does a
// double Ctrl-C (two interrupts 10 ms apart), which says it goes on
// cleaning up rather than skipping the clean-up.
func TestScenarioInterrupt(t *testing.T) {
	t.Run("once", func(t *testing.T) { interruptRun(t, 1) })
	t.Run("twice", func(t *testing.T) { interruptRun(t, 2) })
}

func interruptRun(t *testing.T, interrupts int) {
	e := shortHome(t, newEnv(t))
	file := filepath.Join(t.TempDir(), "long.yaml")
	writeFile(t, file, []byte("apiVersion: kubesim.io/v1alpha1\nkind: Scenario\nname: long\ncluster: {nodeGroups: [{count: 1}]}\nsteps:\n- sleep: 10m\n"))
	cmd := exec.Command(binary, "run", file)
	cmd.Env = append(os.Environ(), "KUBESIM_HOME="+e.home, "KUBECONFIG="+e.kubeconfig)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	go func() {
		var seen strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := stdout.Read(buf)
			seen.Write(buf[:n])
			if strings.Contains(seen.String(), "clusters ready") {
				ready <- seen.String()
				_, _ = io.Copy(io.Discard, stdout)
				return
			}
			if err != nil {
				ready <- seen.String()
				return
			}
		}
	}()
	select {
	case out := <-ready:
		if !strings.Contains(out, "clusters ready") {
			t.Fatalf("the run ended before its cluster was ready: %s %s", out, stderr.String())
		}
	case <-time.After(3 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatal("no cluster after 3 minutes")
	}
	for i := range interrupts {
		if i > 0 {
			time.Sleep(10 * time.Millisecond) // the second press of a double Ctrl-C
		}
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(stderr.String(), "interrupted; clusters cleaned up") {
			t.Errorf("interrupted run: err %v, stderr %q", err, stderr.String())
		}
		if interrupts > 1 && !strings.Contains(stderr.String(), "interrupted again: still winding up and cleaning up") {
			t.Errorf("the second interrupt is not told: stderr %q", stderr.String())
		}
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatal("the run did not end within a minute of Ctrl-C")
	}
	if out := e.must("get", "clusters").stdout; strings.Contains(out, "scn-") {
		t.Errorf("the cluster is left after Ctrl-C: %s", out)
	}
	if pids := e.processes(); len(pids) > 0 {
		t.Errorf("processes left after Ctrl-C: %v", pids)
	}
}

// twoClusters exercises most steps, on two clusters made side by side.
const twoClusters = `apiVersion: kubesim.io/v1alpha1
kind: Scenario
name: two
clusters:
- name: a
  nodeGroups: [{count: 2}]
- name: b
  nodeGroups: [{name: w, count: 1, taints: [{key: dedicated, value: x, effect: NoSchedule}]}]
steps:
- cluster: a
  apply:
    resource:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web}
      spec:
        replicas: 2
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec: {containers: [{name: c, image: nginx}]}
- {cluster: a, wait: {rolledOut: {name: web}}}
- {cluster: a, label: {nodes: node-000000, labels: {disk: ssd}}}
- cluster: a
  assert:
  - object: {apiVersion: v1, kind: Node, metadata: {name: node-000000, labels: {disk: ssd}}}
  - nodes: {nodes: {selector: disk=ssd}, ready: true, count: 1}
- {cluster: a, evict: {selector: app=web}}
- {cluster: a, assert: [{evictions: {made: 1, refused: 0}}]}
- {cluster: a, wait: {event: {reason: SuccessfulCreate, kind: ReplicaSet, name: "web-*"}}}
- cluster: b
  apply:
    resource: {apiVersion: v1, kind: Pod, metadata: {name: lone, labels: {app: lone}}, spec: {containers: [{name: c, image: nginx}]}}
- {cluster: b, assert: [{pods: {selector: app=lone, phase: Pending, count: 1}}]}
- {cluster: b, taint: {nodes: w-0, taints: [{key: dedicated, effect: NoSchedule}], remove: true}}
- {cluster: b, wait: {pods: {selector: app=lone, phase: Running, node: w-0, count: 1}}}
- {cluster: b, kubectl: get pods -o wide}
- {cluster: b, scale: {nodeGroup: w, replicas: 3}}
- {cluster: b, assert: [{nodes: {nodes: {selector: kubesim.io/node-group=w}, ready: true, count: 3}}]}
- {cluster: b, scale: {nodeGroup: w, replicas: 2}}
- {cluster: b, assert: [{nodes: {nodes: [w-0, w-1], count: 2}}, {nodes: {nodes: {selector: kubesim.io/node-group=w}, count: 2}}]}
- {name: expected to fail, cluster: a, continueOnError: true, assert: [{pods: {selector: app=web, count: 99}}]}
- {name: still runs, cluster: a, wait: {pods: {selector: app=web, phase: Running, count: 2}}}
`

// TestScenarioTwoClusters: steps aimed at two clusters made side by side
// (label, taint, evict, kubectl, scale of a node group, object/event/nodes
// assertions); a failure
// with continueOnError is reported, the run goes on, and exits 1.
func TestScenarioTwoClusters(t *testing.T) {
	e := shortHome(t, newEnv(t))
	file := filepath.Join(t.TempDir(), "two.yaml")
	writeFile(t, file, []byte(twoClusters))
	r := e.run("run", file)
	t.Log(r.stdout)
	if r.code != 1 {
		t.Fatalf("want exit 1 (one step failed, continueOnError): %s", r)
	}
	for _, want := range []string{"✗ expected to fail", "✓ still runs", "lone", "w-0", "✓ evictions of the last disruption", "FAILED two"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if n := strings.Count(r.stdout, "✗"); n != 2 {
		t.Errorf("want the one failed step and its assertion marked ✗, got %d", n)
	}
	if out := e.must("get", "clusters").stdout; strings.Contains(out, "scn-") {
		t.Errorf("clusters left behind: %s", out)
	}
}
