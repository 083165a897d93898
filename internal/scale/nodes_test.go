package scale

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

// A cluster deleted (or stopped) under a wait for its nodes ends the wait
// with that news, not with the full timeout and a word about the simulator.
func TestWaitEndsWhenTheClusterIsGone(t *testing.T) {
	gone := errors.New(`cluster "blue" does not exist`)
	start := time.Now()
	err := Nodes(context.Background(), fake.NewClientset(), Options{
		Replicas: 2,
		Wait:     time.Minute, // nothing makes them Ready
		Gone:     func() error { return gone },
	})
	if !errors.Is(err, gone) {
		t.Errorf("got %v, want %v", err, gone)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("the wait took %s", took)
	}
}

func TestInParallelStopsAtTheFirstError(t *testing.T) {
	boom := errors.New("boom")
	indexes := make([]int, 10_000)
	for i := range indexes {
		indexes[i] = i
	}
	var calls atomic.Int32
	err := inParallel(context.Background(), "testing", indexes, NodeName, newProgress(nil, false), func(ctx context.Context, i int) error {
		calls.Add(1)
		if i == 3 {
			return boom
		}
		<-ctx.Done() // the others wait for the error to cancel them
		return ctx.Err()
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), NodeName(3)) {
		t.Errorf("err = %v, want the first error, boom, naming %s", err, NodeName(3))
	}
	if c := calls.Load(); c > 2*workers {
		t.Errorf("%d calls after the error, want no more handed out", c)
	}
}

func TestInParallelReturnsTheContextsError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var calls atomic.Int32
	err := inParallel(ctx, "testing", []int{0, 1, 2}, NodeName, newProgress(nil, false), func(context.Context, int) error { calls.Add(1); return nil })
	if !errors.Is(err, context.Canceled) || calls.Load() != 0 {
		t.Errorf("err = %v after %d calls, want context.Canceled and none", err, calls.Load())
	}
}

// The default node is what it always was: the manifest is its one source.
func TestDefaultTemplate(t *testing.T) {
	n := DefaultTemplate()
	if n.Annotations["kwok.x-k8s.io/node"] != "fake" || n.Labels["type"] != "kubesim" || n.Labels["kubernetes.io/os"] != "linux" {
		t.Errorf("default node's metadata: %+v", n.ObjectMeta)
	}
	for name, want := range map[corev1.ResourceName]string{"cpu": "32", "memory": "256Gi", "pods": "110"} {
		if got := n.Status.Capacity[name]; got.String() != want {
			t.Errorf("capacity %s = %s, want %s", name, got.String(), want)
		}
		if got := n.Status.Allocatable[name]; got.String() != want {
			t.Errorf("allocatable %s = %s, want %s", name, got.String(), want)
		}
	}
	n.Labels["type"] = "changed"
	if DefaultTemplate().Labels["type"] != "kubesim" {
		t.Errorf("DefaultTemplate hands out a shared node")
	}
}

// A group's nodes are named and labelled after it, get its capacity and
// taints, and scaling one group leaves the others' nodes alone.
func TestGroupsAreScaledApart(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset()
	worker := v1alpha1.NodeGroup{Name: "worker", Count: 3, Labels: map[string]string{"zone": "z${index}"},
		Capacity: corev1.ResourceList{"cpu": resource.MustParse("4")},
		Taints:   []corev1.Taint{{Key: "dedicated", Value: "w", Effect: corev1.TaintEffectNoSchedule}}}
	for _, g := range []v1alpha1.NodeGroup{{Count: 2}, worker} {
		o, err := GroupOptions(g)
		if err != nil {
			t.Fatal(err)
		}
		if err := Nodes(ctx, client, o); err != nil {
			t.Fatal(err)
		}
	}
	names := func() []string {
		list, _ := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		var out []string
		for _, n := range list.Items {
			out = append(out, n.Name)
		}
		slices.Sort(out)
		return out
	}
	if got := strings.Join(names(), " "); got != "node-000000 node-000001 worker-0 worker-1 worker-2" {
		t.Fatalf("nodes: %s", got)
	}
	n, _ := client.CoreV1().Nodes().Get(ctx, "worker-2", metav1.GetOptions{})
	if n.Labels["zone"] != "z2" || n.Labels[v1alpha1.NodeGroupLabel] != "worker" || n.Labels["type"] != "kubesim" ||
		n.Status.Allocatable.Cpu().String() != "4" || n.Status.Capacity.Memory().String() != "256Gi" || len(n.Spec.Taints) != 1 {
		t.Errorf("worker-2: labels %v, allocatable %v, taints %v", n.Labels, n.Status.Allocatable, n.Spec.Taints)
	}
	o, _ := GroupOptions(worker)
	o.Replicas = 1
	if err := Nodes(ctx, client, o); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names(), " "); got != "node-000000 node-000001 worker-0" {
		t.Errorf("after scaling worker to 1: %s", got)
	}
}

// A scale down says how many nodes it deleted, what it left, and how many
// pods it displaced: --replicas is the total, and pods go with their nodes.
func TestScaleDownSaysWhatItDisplaced(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset()
	for i := range 4 {
		if _, err := client.CoreV1().Nodes().Create(ctx, Stamp(DefaultTemplate(), NodeName(i), nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i, pod := range []struct {
		node  string
		phase corev1.PodPhase
	}{
		{NodeName(0), corev1.PodRunning}, // kept
		{NodeName(2), corev1.PodRunning},
		{NodeName(3), corev1.PodPending},
		{NodeName(3), corev1.PodRunning},
		{NodeName(3), corev1.PodSucceeded}, // done: nothing to displace
	} {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Namespace: "default"},
			Spec: corev1.PodSpec{NodeName: pod.node}, Status: corev1.PodStatus{Phase: pod.phase}}
		if _, err := client.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var out strings.Builder
	if err := Nodes(ctx, client, Options{Replicas: 2, Progress: &out}); err != nil {
		t.Fatal(err)
	}
	want := "deleted 2 nodes (node-000002 … node-000003), leaving 2; 3 pods were bound to them: displaced"
	if !strings.Contains(out.String(), want) {
		t.Errorf("said:\n%s\nwant a line with %q", out.String(), want)
	}
	out.Reset()
	if err := Nodes(ctx, client, Options{Replicas: 1, Progress: &out}); err != nil {
		t.Fatal(err)
	}
	if want := "deleted 1 node (node-000001), leaving 1; no pods were bound to them"; !strings.Contains(out.String(), want) {
		t.Errorf("said:\n%s\nwant a line with %q", out.String(), want)
	}
}
