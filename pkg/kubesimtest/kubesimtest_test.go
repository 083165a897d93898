package kubesimtest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

// failPods is a Stage: pods labelled kubesimtest=fail fail at once.
const failPods = `
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: kubesimtest-fail}
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchLabels: {kubesimtest: fail}
    matchExpressions:
    - {key: .metadata.deletionTimestamp, operator: DoesNotExist}
    - {key: .status.phase, operator: NotIn, values: [Failed]}
  weight: 10
  next:
    statusTemplate: |
      phase: Failed
      reason: FailedByStage
`

func TestMain(m *testing.M) {
	Main(m, Nodes(2), Stages(failPods))
}

func TestStartWithNodes(t *testing.T) {
	// Nothing may land in the user's home: no kubeconfig, no ~/.kubesim.
	home := t.TempDir()
	t.Setenv("HOME", home)

	c := Start(t, Nodes(3,
		Label("topology.kubernetes.io/zone", "a"),
		Spread("rack", "r1", "r2"),
		Taint("dedicated", "test", corev1.TaintEffectNoSchedule),
		Capacity(corev1.ResourceCPU, "4")))
	cs := kubernetes.NewForConfigOrDie(c.Config())
	ctx := context.Background()

	if got := c.Nodes(); strings.Join(got, " ") != "node-000000 node-000001 node-000002" {
		t.Fatalf("Nodes() = %v, want node-000000 … node-000002", got)
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	racks := map[string]string{"node-000000": "r1", "node-000001": "r2", "node-000002": "r1"}
	for _, n := range nodes.Items {
		if n.Labels["rack"] != racks[n.Name] {
			t.Errorf("node %s: rack %q, want Spread's %q", n.Name, n.Labels["rack"], racks[n.Name])
		}
		if n.Labels["topology.kubernetes.io/zone"] != "a" {
			t.Errorf("node %s: labels %v, want topology.kubernetes.io/zone=a", n.Name, n.Labels)
		}
		if !hasTaint(n, "dedicated", corev1.TaintEffectNoSchedule) {
			t.Errorf("node %s: taints %v, want dedicated=test:NoSchedule", n.Name, n.Spec.Taints)
		}
		if cpu := n.Status.Allocatable.Cpu().String(); cpu != "4" {
			t.Errorf("node %s: allocatable cpu %s, want 4", n.Name, cpu)
		}
		if !ready(n) {
			t.Errorf("node %s is not Ready when Start returned", n.Name)
		}
	}

	// The kubeconfig file reaches the same cluster.
	fromFile, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kubernetes.NewForConfigOrDie(fromFile).CoreV1().Nodes().Get(ctx, "node-000002", metav1.GetOptions{}); err != nil {
		t.Errorf("client from Kubeconfig(): %v", err)
	}
	if entries, _ := os.ReadDir(home); len(entries) > 0 {
		t.Errorf("Start wrote into the user's home: %v", entries)
	}

	// StopNode and StartNode reach the node's simulated kubelet.
	c.StopNode("node-000001")
	waitNode(t, cs, "node-000001", func(n *corev1.Node) bool { return n.Labels["kubesim.io/node-stopped"] == "true" })
	c.StartNode("node-000001")
	waitNode(t, cs, "node-000001", func(n *corev1.Node) bool { return n.Labels["kubesim.io/node-stopped"] == "" })

	if log := c.Logs("kube-apiserver"); !strings.Contains(log, "Serving securely") {
		t.Errorf("Logs(kube-apiserver) does not look like the API server's log: %.300s", log)
	}
	t.Logf("Start took %s (create → ready, as the package saw it)", c.StartupTime())
}

// TestComponentOptions checks that the component options reach kubesim:
// the supervisor's log has each component's command line as it starts it.
func TestComponentOptions(t *testing.T) {
	c := Start(t, Nodes(1), StageSet("realistic"), Descheduler(10*time.Second, "TopologyAndDuplicates"),
		WithoutDPDBController(), WithoutUsageMetrics(), HorizontalPodAutoscaler(2*time.Second, 7*time.Second),
		ExtraArgs("kube-scheduler", "--v=3"))
	var log string
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		log = c.Logs("supervisor")
		return strings.Contains(log, "started descheduler") && strings.Contains(log, "started kube-scheduler"), nil
	})
	if err != nil {
		t.Fatalf("the supervisor started no descheduler or kube-scheduler:\n%s", log)
	}
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "started kube-scheduler") && !strings.Contains(line, " --v=3") {
			t.Errorf("kube-scheduler started without ExtraArgs' --v=3: %s", line)
		}
		if strings.Contains(line, "started descheduler") && !strings.Contains(line, "--interval=10s") {
			t.Errorf("descheduler started without Descheduler's interval: %s", line)
		}
	}
	if strings.Contains(log, "started dpdb-controller") {
		t.Errorf("WithoutDPDBController: the dpdb-controller was started")
	}
	if strings.Contains(log, "started usage-metrics") {
		t.Errorf("WithoutUsageMetrics: usage-metrics was started")
	}
	if !strings.Contains(log, "--horizontal-pod-autoscaler-sync-period=2s --horizontal-pod-autoscaler-downscale-stabilization=7s") {
		t.Errorf("HorizontalPodAutoscaler's timing is not on the controller-manager's command line:\n%s", log)
	}

	// The realistic stage set takes a second or more to make a pod Running;
	// the fast one does it at once.
	cs := kubernetes.NewForConfigOrDie(c.Config())
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "slow", Namespace: "default"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
	began := time.Now()
	if _, err := cs.CoreV1().Pods("default").Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods("default").Get(ctx, "slow", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, nil
	})
	if err != nil {
		t.Fatalf("pod never Running: %v", err)
	}
	if took := time.Since(began); took < time.Second {
		t.Errorf("pod Running after %s; StageSet(realistic) takes 1s or more", took)
	}
}

func TestSharedInParallel(t *testing.T) {
	var mu sync.Mutex
	namespaces := map[string]string{} // test → namespace
	clusters := map[string]bool{}
	t.Run("group", func(t *testing.T) {
		for i := range 3 {
			t.Run(strconv.Itoa(i), func(t *testing.T) {
				t.Parallel()
				c, ns := Shared(t)
				cs := kubernetes.NewForConfigOrDie(c.Config())
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "same-name"}}
				if _, err := cs.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
					t.Fatalf("namespace %s: %v", ns, err)
				}
				mu.Lock()
				namespaces[t.Name()], clusters[c.Name()] = ns, true
				mu.Unlock()
			})
		}
	})
	if len(clusters) != 1 {
		t.Errorf("parallel tests saw clusters %v, want one shared cluster", clusters)
	}
	seen := map[string]bool{}
	for test, ns := range namespaces {
		if seen[ns] {
			t.Errorf("namespace %s handed to two tests", ns)
		}
		seen[ns] = true
		if !strings.HasPrefix(ns, "testsharedinparallel-group-") {
			t.Errorf("test %s got namespace %s, want one named after it", test, ns)
		}
	}

	// Each namespace is deleted when its test ends.
	c, _ := Shared(t)
	cs := kubernetes.NewForConfigOrDie(c.Config())
	for ns := range seen {
		n, err := cs.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
		if err == nil && n.DeletionTimestamp == nil {
			t.Errorf("namespace %s outlived its test", ns)
		} else if err != nil && !apierrors.IsNotFound(err) {
			t.Error(err)
		}
	}
}

// TestSharedStages checks Main's options: the shared cluster has the
// nodes and the Stage it was given.
func TestSharedStages(t *testing.T) {
	t.Parallel()
	c, ns := Shared(t)
	if got := len(c.Nodes()); got != 2 {
		t.Errorf("shared cluster has %d nodes, want the 2 Main asked for", got)
	}
	cs := kubernetes.NewForConfigOrDie(c.Config())
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "doomed", Labels: map[string]string{"kubesimtest": "fail"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
	ctx := context.Background()
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, "doomed", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodFailed, err
	})
	if err != nil {
		t.Fatalf("pod never Failed by the Stage given to Main: %v", err)
	}
}

// firstLook is a Stage that marks each node with its Ready status as the
// Stage first saw it: "none" if before the simulator initialised it.
const firstLook = `
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: kubesimtest-first-look}
spec:
  resourceRef: {apiGroup: v1, kind: Node}
  selector:
    matchExpressions:
    - {key: '.metadata.annotations["kubesimtest.io/first-look"]', operator: DoesNotExist}
  weight: 10
  next:
    patches:
    - template: |
        {{- $ready := "none" }}
        {{- range .status.conditions }}{{ if eq .type "Ready" }}{{ $ready = .status }}{{ end }}{{ end }}
        metadata:
          annotations:
            kubesimtest.io/first-look: {{ $ready | Quote }}
`

// TestStagesRuleFromTheFirstNode: a test's Stages are made with its
// cluster, so they apply to the first nodes before the built-in ones do.
// (Applied once the cluster was up, they met nodes already Ready.)
func TestStagesRuleFromTheFirstNode(t *testing.T) {
	c := Start(t, Nodes(2), Stages(firstLook))
	nodes, err := kubernetes.NewForConfigOrDie(c.Config()).CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		if got := n.Annotations["kubesimtest.io/first-look"]; got != "none" {
			t.Errorf("node %s: the Stage first saw it with Ready %q, want before it was initialised (none)", n.Name, got)
		}
	}
}

// fakeT is a test that Start can fail and clean up on, observed from
// the real test: what it logs, whether it failed.
type fakeT struct {
	testing.TB // the real test, for what fakeT does not override
	mu         sync.Mutex
	failed     bool
	out        strings.Builder
	cleanups   []func()
}

func (f *fakeT) Helper()           {}
func (f *fakeT) Name() string      { return "TestFake/failing" }
func (f *fakeT) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }
func (f *fakeT) Failed() bool      { f.mu.Lock(); defer f.mu.Unlock(); return f.failed }
func (f *fakeT) Logf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.out.WriteString(strings.TrimSpace(fmt.Sprintf(format, args...)) + "\n")
}
func (f *fakeT) Errorf(format string, args ...any) {
	f.Logf(format, args...)
	f.mu.Lock()
	f.failed = true
	f.mu.Unlock()
}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.Errorf(format, args...)
	runtime.Goexit() // ends the goroutine of within
}

// within runs fn as f's test body, then f's cleanups, as testing would.
func (f *fakeT) within(fn func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	<-done
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

func TestFailedTestPrintsLogsAndCleanupLeavesNoProcess(t *testing.T) {
	f := &fakeT{TB: t}
	var home string
	f.within(func() {
		c := Start(f, Nodes(1))
		home = c.home
		if len(processes(home)) == 0 {
			t.Errorf("no processes found for the running cluster in %s", home)
		}
		f.Errorf("the test under test failed")
	})
	out := f.out.String()
	// Not etcd: its log file appears at its first write, which may come later.
	for _, component := range []string{"kube-apiserver", "kube-scheduler", "kube-controller-manager", "supervisor"} {
		if !strings.Contains(out, "lines of "+component+":") {
			t.Errorf("a failed test's output has no tail of %s's log:\n%s", component, out)
		}
	}
	if home == "" {
		t.Fatalf("Start failed: %s", out)
	}
	if pids := processes(home); len(pids) > 0 {
		t.Errorf("processes left after cleanup: %v", pids)
	}
	if _, err := os.Stat(home); !os.IsNotExist(err) {
		t.Errorf("cluster directory %s left after cleanup (%v)", home, err)
	}
}

func TestClearErrors(t *testing.T) {
	empty := t.TempDir()
	for _, tc := range []struct {
		name, binary, path string
		opts               []Option
		want               string
	}{
		{"no binary anywhere", "", empty, nil, "no kubesim binary: set KUBESIM_BINARY"},
		{"KUBESIM_BINARY not a file", filepath.Join(empty, "kubesim"), "", nil, "is not an executable file; build one with `make build`"},
		{"negative nodes", "", "", []Option{Nodes(-1)}, "kubesimtest.Nodes: -1 nodes"},
		{"nodes twice", "", "", []Option{Nodes(1), Nodes(2)}, "kubesimtest.Nodes: given twice"},
		{"group twice", "", "", []Option{NodeGroup("a", 1), NodeGroup("a", 2)}, `kubesimtest.NodeGroup("a"): given twice`},
		{"unnamed group", "", "", []Option{NodeGroup("", 1)}, `kubesimtest.NodeGroup(""): empty name; use Nodes`},
		{"kubesim refuses a group", "", "", []Option{NodeGroup("Bad_Name", 1)}, `nodeGroups[0].name: "Bad_Name" is not a DNS label`},
		{"bad taint", "", "", []Option{Nodes(1, Taint("k", "v", "Sometimes"))}, "kubesimtest.Taint"},
		{"spread without values", "", "", []Option{Nodes(1, Spread("zone"))}, "kubesimtest.Spread"},
		{"bad capacity", "", "", []Option{Nodes(1, Capacity(corev1.ResourceCPU, "lots"))}, "kubesimtest.Capacity"},
		{"fractional eviction", "", "", []Option{NodeFailure(5*time.Second, 1500*time.Millisecond)}, "whole seconds"},
		{"unknown stage set", "", "", []Option{StageSet("slow")}, "kubesimtest.StageSet"},
		{"no HPA sync period", "", "", []Option{HorizontalPodAutoscaler(0, time.Second)}, "kubesimtest.HorizontalPodAutoscaler(0s, 1s): want a positive sync period"},
		{"kubesim refuses a flag", "", "", []Option{ExtraArgs("kube-scheduler", "--no-such-flag")}, "no-such-flag"},
		{"not a version", "", "", []Option{Kubernetes("latest")}, `kubesimtest.Kubernetes("latest"): want a minor version such as 1.35`},
		{"a version not offered", "", "", []Option{Kubernetes("1.99")}, "kubesim does not offer Kubernetes 1.99"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.binary != "" || tc.path != "" {
				t.Setenv("KUBESIM_BINARY", tc.binary)
				if tc.path != "" {
					t.Setenv("PATH", tc.path)
				}
			}
			f := &fakeT{TB: t}
			f.within(func() {
				Start(f, tc.opts...)
				t.Errorf("Start returned; want it to fail with %q", tc.want)
			})
			msg := strings.TrimSpace(f.out.String())
			if !f.failed || !strings.Contains(msg, tc.want) {
				t.Errorf("Start failed with %q; want an error containing %q", msg, tc.want)
			}
			if strings.Contains(msg, "\n") || strings.Contains(msg, "panic") {
				t.Errorf("want one line, got:\n%s", msg)
			}
		})
	}
}

// TestConfigFile checks the Cluster file and node template the options
// write, field by field as kubesim reads them.
func TestConfigFile(t *testing.T) {
	template := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"pool": "gpu"}}}
	s := &settings{}
	for _, opt := range []Option{
		Nodes(2, Template(template), Label("zone", "b"), Capacity("nvidia.com/gpu", "8")),
		NodeGroup("infra", 1, Taint("dedicated", "infra", corev1.TaintEffectNoSchedule), Label("rack", "r${index}"),
			Devices(v1alpha1.Devices{Driver: "nic.example.com", Count: 2})),
		NodeFailure(6*time.Second, 2*time.Second),
	} {
		if err := opt(s); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	path, err := writeConfig(dir, "kt-x", s)
	if err != nil {
		t.Fatal(err)
	}
	var cluster map[string]any
	readYAML(t, path, &cluster)
	want := map[string]any{
		"apiVersion": "kubesim.io/v1alpha1", "kind": "Cluster", "name": "kt-x",
		"nodeGroups": []any{
			map[string]any{"count": float64(2), "labels": map[string]any{"zone": "b"}, "capacity": map[string]any{"nvidia.com/gpu": "8"},
				"template": filepath.Join(dir, "node-template-node.yaml")},
			map[string]any{"name": "infra", "count": float64(1), "labels": map[string]any{"rack": "r${index}"},
				"taints":  []any{map[string]any{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}},
				"devices": []any{map[string]any{"driver": "nic.example.com", "count": float64(2)}}},
		},
		"nodeLifecycle": map[string]any{"nodeMonitorPeriod": "1s", "nodeMonitorGracePeriod": "6s", "podEvictionToleration": "2s"},
		// Cluster's struct fields, unset: their fields are all pointers or
		// empty, which kubesim reads as its defaults.
		"networking": map[string]any{}, "scheduler": map[string]any{}, "descheduler": map[string]any{},
		"usage": map[string]any{}, "horizontalPodAutoscaler": map[string]any{}, "autoscaler": map[string]any{},
	}
	if !reflect.DeepEqual(cluster, want) {
		t.Errorf("cluster.yaml:\n got %v\nwant %v", cluster, want)
	}
	var node corev1.Node
	readYAML(t, filepath.Join(dir, "node-template-node.yaml"), &node)
	if node.Kind != "Node" || node.Labels["pool"] != "gpu" {
		t.Errorf("node template: %+v", node)
	}
	if template.Labels["zone"] != "" {
		t.Errorf("Label changed the caller's template")
	}
}

// A node group's devices are published as ResourceSlices, with the
// driver's DeviceClass, before Start returns.
func TestDevices(t *testing.T) {
	c := Start(t, NodeGroup("gpu", 2, Devices(v1alpha1.Devices{Driver: "gpu.example.com", Count: 4})))
	cs := kubernetes.NewForConfigOrDie(c.Config())
	ctx := context.Background()
	slices, err := cs.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pools := map[string]int{}
	for _, s := range slices.Items {
		pools[s.Spec.Pool.Name] += len(s.Spec.Devices)
	}
	if len(pools) != 2 || pools["gpu-0"] != 4 || pools["gpu-1"] != 4 {
		t.Errorf("devices per pool: %v, want 4 on each of gpu-0 and gpu-1", pools)
	}
	if _, err := cs.ResourceV1().DeviceClasses().Get(ctx, "gpu.example.com", metav1.GetOptions{}); err != nil {
		t.Errorf("the driver's DeviceClass: %v", err)
	}
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func TestClusterNames(t *testing.T) {
	seen := map[string]bool{}
	for _, test := range []string{"", "TestX", "Test/With Spaces/and_UNDERSCORES", strings.Repeat("TestVeryLong", 20), "---"} {
		name := clusterName(test)
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 || len(name) > 30 {
			t.Errorf("clusterName(%q) = %q: %v (want a short DNS label)", test, name, errs)
		}
		if seen[name] {
			t.Errorf("clusterName(%q) = %q twice", test, name)
		}
		seen[name] = true
	}
}

// TestOnlyClientGo keeps the package importable without kubesim's module:
// no k8s.io/kubernetes among its dependencies, no replace directives.
func TestOnlyClientGo(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	var clientGo bool
	for _, d := range deps {
		if d == "k8s.io/kubernetes" || strings.HasPrefix(d, "k8s.io/kubernetes/") || strings.HasPrefix(d, "github.com/kubesim/kubesim/internal") {
			t.Errorf("kubesimtest depends on %s", d)
		}
		clientGo = clientGo || d == "k8s.io/client-go/rest"
	}
	if !clientGo {
		t.Errorf("go list -deps does not list k8s.io/client-go/rest; is it listing this package? %.500s", out)
	}
	mod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	// One replace only, for kubesim's API types until they are published:
	// users requiring kubesimtest by a replace need that one too.
	for _, line := range strings.Split(string(mod), "\n") {
		if strings.HasPrefix(line, "replace ") && !strings.HasPrefix(line, "replace github.com/kubesim/kubesim/apis => ") {
			t.Errorf("go.mod: %q; users would have to copy it", line)
		}
	}
}

// processes lists the pids whose command line names dir, as every
// process of a cluster names its home.
func processes(dir string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		status, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if bytes.Contains(cmdline, []byte(dir)) && !bytes.Contains(status, []byte("State:\tZ")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func hasTaint(n corev1.Node, key string, effect corev1.TaintEffect) bool {
	for _, taint := range n.Spec.Taints {
		if taint.Key == key && taint.Effect == effect {
			return true
		}
	}
	return false
}

func ready(n corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func waitNode(t *testing.T, cs kubernetes.Interface, name string, ok func(*corev1.Node) bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		return err == nil && ok(n), nil
	})
	if err != nil {
		t.Fatalf("node %s: condition not met in 30s", name)
	}
}

// helperEnv makes the test binary, run again by a test below, start
// clusters and wait to be interrupted ("interrupt") or end ("end").
const helperEnv = "KUBESIMTEST_HELPER"

// TestHelperClusters is the helper's body: it starts a cluster of its own
// and the shared one, prints their homes, and waits for stdin to close.
func TestHelperClusters(t *testing.T) {
	if os.Getenv(helperEnv) == "" {
		t.Skip("run by TestMainDeletesClusters")
	}
	own := Start(t, Nodes(1))
	shared, _ := Shared(t)
	fmt.Printf("HOMES %s %s\n", own.home, shared.home)
	if os.Getenv(helperEnv) != "end" {
		_, _ = io.ReadAll(os.Stdin) // until interrupted or timed out
	}
}

// TestMainDeletesClusters runs the test binary again: once to the end,
// where Main deletes the shared cluster; once interrupted with Ctrl-C's
// SIGINT, and once until go test's -timeout ends it, where Main deletes
// every cluster; once killed, where nothing of it runs: its clusters stop
// as their owner is gone, and the next test binary removes their files.
func TestMainDeletesClusters(t *testing.T) {
	for _, mode := range []string{"end", "interrupt", "timeout", "kill"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperClusters$", "-test.v", "-test.timeout=40s")
			cmd.Env = append(os.Environ(), helperEnv+"="+mode)
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			var stderr bytes.Buffer // the timeout's panic is expected: shown only on failure
			cmd.Stderr = &stderr
			defer func() {
				if t.Failed() {
					t.Logf("the helper's stderr:\n%s", stderr.String())
				}
			}()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer stdin.Close()
			homes := make(chan []string, 1)
			go func() {
				scanner := bufio.NewScanner(stdout)
				for scanner.Scan() {
					if rest, ok := strings.CutPrefix(scanner.Text(), "HOMES "); ok {
						homes <- strings.Fields(rest)
					}
				}
				close(homes)
			}()
			var dirs []string
			select {
			case dirs = <-homes:
			case <-time.After(3 * time.Minute):
			}
			if len(dirs) != 2 {
				cmd.Process.Kill()
				t.Fatalf("the helper printed no homes")
			}
			switch mode {
			case "interrupt":
				cmd.Process.Signal(os.Interrupt)
			case "kill":
				cmd.Process.Kill()
			}
			err := cmd.Wait()
			if mode == "kill" {
				for _, home := range dirs {
					// A supervisor looks for its owner every second.
					for deadline := time.Now().Add(15 * time.Second); len(processes(home)) > 0 && time.Now().Before(deadline); {
						time.Sleep(100 * time.Millisecond)
					}
				}
				removeLeftovers()
			}
			for _, home := range dirs {
				if pids := processes(home); len(pids) > 0 {
					t.Errorf("%s: processes of %s left: %v", mode, home, pids)
					cleanUp := exec.Command(os.Getenv("KUBESIM_BINARY"), "delete", "cluster", "--all")
					cleanUp.Env = append(os.Environ(), "KUBESIM_HOME="+home, "KUBECONFIG="+filepath.Join(t.TempDir(), "kubeconfig"))
					_ = cleanUp.Run()
				}
				if _, err := os.Stat(filepath.Dir(home)); !os.IsNotExist(err) {
					t.Errorf("%s: %s left behind (%v)", mode, filepath.Dir(home), err)
				}
			}
			if (mode == "end") != (err == nil) {
				t.Errorf("%s: the helper ended with %v", mode, err)
			}
		})
	}
}

func TestCheckRevision(t *testing.T) {
	need := fmt.Sprintf("this kubesimtest needs API revision %d or later: rebuild it (make build)", v1alpha1.Revision)
	for _, tc := range []struct {
		name   string
		out    string
		runErr error
		want   string
	}{
		{"current", fmt.Sprintf(`{"kubesim": "v1", "apiRevision": %d}`, v1alpha1.Revision), nil, ""},
		{"newer", fmt.Sprintf(`{"kubesim": "v9", "apiRevision": %d, "more": true}`, v1alpha1.Revision+1), nil, ""},
		{"older", fmt.Sprintf(`{"kubesim": "v0.1", "apiRevision": %d}`, v1alpha1.Revision-1), nil,
			fmt.Sprintf("KUBESIM_BINARY /bin/k is kubesim v0.1 (API revision %d); %s", v1alpha1.Revision-1, need)},
		{"before revisions", "", errors.New("unknown shorthand flag: 'o' in -o"), "KUBESIM_BINARY /bin/k cannot say its API revision (kubesim version -o json: unknown shorthand flag: 'o' in -o); " + need},
		{"not JSON", "kubesim v1\n", nil, `KUBESIM_BINARY /bin/k printed no API revision (kubesim version -o json: "kubesim v1\n"); ` + need},
	} {
		err := checkRevision("KUBESIM_BINARY /bin/k", []byte(tc.out), tc.runErr)
		if got := fmt.Sprint(err); (tc.want == "" && err != nil) || (tc.want != "" && got != tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: not one line: %q", tc.name, err)
		}
	}
}
