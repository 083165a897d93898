//go:build e2e

// Package e2e drives the kubesim binary as a user would, against real
// control planes it starts, and checks what a user would see.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
)

// binary is the kubesim under test, built once per run.
var binary string

func TestMain(m *testing.M) {
	binary = os.Getenv("KUBESIM_BINARY")
	if binary == "" {
		// Built the way users build it, so versions are stamped.
		root, _ := filepath.Abs("../..")
		cmd := exec.Command("make", "-C", root, "build")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building kubesim:", err)
			os.Exit(1)
		}
		binary = filepath.Join(root, "bin", "kubesim")
	}
	os.Exit(m.Run())
}

// env is one isolated user: their own kubesim home and kubeconfig.
type env struct {
	t          testing.TB
	home       string
	kubeconfig string
	// cluster is the one e.kubectl and e.apply talk to.
	cluster string
}

// newEnv is a new user for a test that runs beside others: a top-level
// test that calls it runs in parallel (go test's -parallel, GOMAXPROCS by
// default) once the tests that run alone are done. Most of the suite's
// time is spent waiting on clusters' own timers, not on the CPU.
func newEnv(t testing.TB) *env {
	t.Helper()
	if pt, ok := t.(*testing.T); ok && !strings.Contains(t.Name(), "/") {
		if _, again := parallelTests.LoadOrStore(t.Name(), true); !again {
			pt.Parallel()
		}
	}
	return newEnvAlone(t)
}

// parallelTests are the tests newEnv has made parallel (a test may make
// two users; Parallel may be called once).
var parallelTests sync.Map

// newEnvAlone is a new user for a test that runs alone: one that asserts
// upstream's timings on a scaled clock (a busy machine stretches them), or
// measures, or loads the machine itself.
func newEnvAlone(t testing.TB) *env {
	t.Helper()
	dir := t.TempDir()
	e := &env{t: t, home: filepath.Join(dir, "kubesim"), kubeconfig: filepath.Join(dir, "kube", "config")}
	t.Cleanup(func() {
		if t.Failed() {
			e.dumpLogs()
		}
		e.run("delete", "cluster", "--all")
		if pids := e.processes(); len(pids) > 0 {
			t.Errorf("processes left behind after delete --all: %v", pids)
		}
	})
	return e
}

// createCluster creates the cluster name with extra create flags and makes
// it the one e.kubectl and e.apply talk to.
func (e *env) createCluster(name string, args ...string) {
	e.t.Helper()
	e.cluster = name
	e.must(append([]string{"create", "cluster", "--name", name}, args...)...)
}

// threeNodesFastFailures are create flags for tests of node failures: three
// nodes, declared dead after 10s, their pods evicted 2s later.
var threeNodesFastFailures = []string{"--nodes", "3", "--node-monitor-grace-period", "10s", "--pod-eviction-toleration", "2s"}

// in is the same user seen from a subtest: failures are reported to t,
// and the parent's env is left as it is.
func (e *env) in(t *testing.T) *env {
	sub := *e
	sub.t = t
	return &sub
}

// result is what a kubesim command printed and how it exited.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
}

// run runs kubesim with args as this env's user.
func (e *env) run(args ...string) result {
	return e.runEnv(nil, args...)
}

func (e *env) runEnv(extraEnv []string, args ...string) result {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(os.Environ(), "KUBESIM_HOME="+e.home, "KUBECONFIG="+e.kubeconfig)
	cmd.Env = append(cmd.Env, extraEnv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if exitErr, ok := err.(*exec.ExitError); ok {
		code = exitErr.ExitCode()
	} else if err != nil {
		e.t.Fatalf("running kubesim %v: %v", args, err)
	}
	return result{stdout.String(), stderr.String(), code}
}

// must runs kubesim and fails the test unless it exits 0.
func (e *env) must(args ...string) result {
	e.t.Helper()
	r := e.run(args...)
	if r.code != 0 {
		e.t.Fatalf("kubesim %s failed: %s", strings.Join(args, " "), r)
	}
	return r
}

// fails runs kubesim, expecting a non-zero exit and a one-line error that
// contains want, with no Go panic or stack trace.
func (e *env) fails(want string, args ...string) result {
	e.t.Helper()
	r := e.run(args...)
	if r.code == 0 {
		e.t.Fatalf("kubesim %s succeeded; want an error containing %q: %s", strings.Join(args, " "), want, r)
	}
	if !strings.Contains(r.stderr, want) {
		e.t.Fatalf("kubesim %s: error does not mention %q: %s", strings.Join(args, " "), want, r)
	}
	if strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "goroutine ") {
		e.t.Fatalf("kubesim %s: panicked: %s", strings.Join(args, " "), r)
	}
	// Without --name, a command first says which cluster it chose.
	stderr := r.stderr
	if strings.HasPrefix(stderr, "Cluster ") {
		_, stderr, _ = strings.Cut(stderr, "\n")
	}
	if lines := strings.Count(strings.TrimSpace(stderr), "\n") + 1; lines > 1 {
		e.t.Errorf("kubesim %s: error spans %d lines, want one: %s", strings.Join(args, " "), lines, r.stderr)
	}
	return r
}

// client is a client-go clientset for the user's current context.
func (e *env) client() *kubernetes.Clientset {
	e.t.Helper()
	return clientsetFor(e.t, mustConfig(e.t, e.kubeconfig))
}

func mustConfig(t testing.TB, kubeconfig string) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatalf("loading %s: %v", kubeconfig, err)
	}
	return cfg
}

func clientsetFor(t testing.TB, cfg *rest.Config) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// clusterDir is where kubesim keeps a cluster's files.
func (e *env) clusterDir(name string) string { return filepath.Join(e.home, "clusters", name) }

// processes lists the pids of processes started for this env's clusters:
// each one names a path under its home on its command line.
func (e *env) processes() []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, entry := range entries {
		pid, err := strconv.Atoi(entry.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", entry.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte(e.home)) && !isZombie(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// componentPID returns the pid of a cluster's running component, or 0.
func (e *env) componentPID(cluster, component string) int {
	for _, pid := range e.processes() {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		args := strings.Split(string(cmdline), "\x00")
		// kubesim component NAME, or another Kubernetes version's
		// kubesim-k8s-MINOR NAME.
		if len(args) > 2 && args[1] == "component" {
			args = args[1:]
		}
		if len(args) > 1 && args[1] == component && strings.Contains(string(cmdline), e.clusterDir(cluster)+"/") {
			return pid
		}
	}
	return 0
}

// supervisorPID returns the pid of a cluster's supervisor, or 0.
func (e *env) supervisorPID(cluster string) int {
	for _, pid := range e.processes() {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		args := strings.Split(string(cmdline), "\x00")
		if len(args) > 2 && args[1] == "component" && args[2] == "supervisor" && slices.Contains(args, "--name="+cluster) {
			return pid
		}
	}
	return 0
}

func isZombie(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(fields) > 0 && fields[0] == "Z"
}

// eventually polls cond until it returns nil or the deadline passes.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not true after %s: %v", what, timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (e *env) dumpLogs() {
	matches, _ := filepath.Glob(filepath.Join(e.home, "clusters", "*", "logs", "*.log"))
	for _, m := range matches {
		if strings.HasSuffix(m, "audit.log") {
			continue
		}
		data, _ := os.ReadFile(m)
		if len(data) > 4000 {
			data = data[len(data)-4000:]
		}
		e.t.Logf("--- %s (tail)\n%s", m, data)
	}
}

// kubectl runs kubesim's kubectl against cluster e.cluster; it must succeed.
func (e *env) kubectl(args ...string) result {
	e.t.Helper()
	return e.must(append([]string{"kubectl", "--name", e.cluster}, args...)...)
}

// apply writes manifest to a file and applies it with kubesim's kubectl.
func (e *env) apply(manifest string) {
	e.t.Helper()
	f := filepath.Join(e.t.TempDir(), "manifest.yaml")
	writeFile(e.t, f, []byte(manifest))
	e.kubectl("apply", "-f", f)
}

// waitPods waits until exactly n pods match selector, all Running and Ready.
func waitPods(t *testing.T, client kubernetes.Interface, selector string, n int) {
	t.Helper()
	eventually(t, 90*time.Second, fmt.Sprintf("%d pods %s running and ready", n, selector), func() error {
		pods, err := client.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return err
		}
		if len(pods.Items) != n {
			return fmt.Errorf("%d pods", len(pods.Items))
		}
		for _, p := range pods.Items {
			if p.Status.Phase != corev1.PodRunning || !podReady(&p) {
				return fmt.Errorf("pod %s is %s", p.Name, p.Status.Phase)
			}
		}
		return nil
	})
}

func labelledPod(name string, labels map[string]string) *corev1.Pod {
	p := testPod(name)
	p.Labels = labels
	return p
}

func waitGone(t *testing.T, client kubernetes.Interface, name string) {
	t.Helper()
	eventually(t, 30*time.Second, "pod "+name+" gone", func() error {
		_, err := client.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (%v)", err)
	})
}

func createPod(t *testing.T, client kubernetes.Interface, p *corev1.Pod) {
	t.Helper()
	if p.Spec.TerminationGracePeriodSeconds == nil {
		grace := int64(30)
		p.Spec.TerminationGracePeriodSeconds = &grace
	}
	if _, err := client.CoreV1().Pods("default").Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func getPod(t *testing.T, client kubernetes.Interface, name string) *corev1.Pod {
	t.Helper()
	p, err := client.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func conditionStatus(p *corev1.Pod, typ corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == typ {
			return c.Status
		}
	}
	return ""
}

func deployment(name string, replicas int32) *appsv1.Deployment {
	l := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: l},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: l},
				Spec: corev1.PodSpec{
					Containers:                    []corev1.Container{{Name: "c", Image: "nginx"}},
					TerminationGracePeriodSeconds: ptr.To[int64](30),
				},
			},
		},
	}
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func runningPods(t *testing.T, client kubernetes.Interface, selector string) []corev1.Pod {
	t.Helper()
	pods, err := client.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	var out []corev1.Pod
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

func testPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
	}
}

// waitNode waits for a node's Ready condition to have status.
func waitNode(t *testing.T, client kubernetes.Interface, name string, status corev1.ConditionStatus) {
	t.Helper()
	eventually(t, 60*time.Second, "node "+name+" Ready="+string(status), func() error {
		n, err := client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == status {
				return nil
			}
		}
		return fmt.Errorf("conditions %v", n.Status.Conditions)
	})
}

func waitPhase(t *testing.T, client kubernetes.Interface, name string, phase corev1.PodPhase) {
	t.Helper()
	eventually(t, 60*time.Second, "pod "+name+" "+string(phase), func() error {
		p, err := client.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.Phase != phase {
			return fmt.Errorf("phase %s", p.Status.Phase)
		}
		return nil
	})
}

func waitUntainted(t *testing.T, client kubernetes.Interface, name string) {
	t.Helper()
	eventually(t, 60*time.Second, name+" untainted", func() error {
		n, err := client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(n.Spec.Taints) > 0 {
			return fmt.Errorf("taints %v", n.Spec.Taints)
		}
		return nil
	})
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// waitEvent waits for an Event with reason on the named object whose
// message contains want.
func waitEvent(t *testing.T, client kubernetes.Interface, namespace, name, reason, want string) {
	t.Helper()
	eventually(t, 30*time.Second, "event "+reason+" on "+name, func() error {
		events, err := client.CoreV1().Events(namespace).List(context.Background(), metav1.ListOptions{
			FieldSelector: fields.Set{"involvedObject.name": name, "reason": reason}.String(),
		})
		if err != nil {
			return err
		}
		for _, ev := range events.Items {
			if strings.Contains(ev.Message, want) {
				return nil
			}
		}
		return fmt.Errorf("%d events, none saying %q", len(events.Items), want)
	})
}

// dispatchedBy counts the requests the API server's Priority and Fairness
// has let through under one FlowSchema.
func dispatchedBy(t *testing.T, client kubernetes.Interface, flowSchema string) float64 {
	n, _ := apiServerMetric(t, client, `apiserver_flowcontrol_dispatched_requests_total{flow_schema="`+flowSchema+`"`)
	return n
}

// apiServerMetric sums the API server's metric lines that start with
// prefix, and says whether there was any.
func apiServerMetric(t *testing.T, client kubernetes.Interface, prefix string) (sum float64, found bool) {
	t.Helper()
	metrics, err := client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(metrics), "\n") {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			v, err := strconv.ParseFloat(rest[strings.LastIndex(rest, " ")+1:], 64)
			if err != nil {
				t.Fatalf("metric line %q: %v", line, err)
			}
			sum, found = sum+v, true
		}
	}
	return sum, found
}
