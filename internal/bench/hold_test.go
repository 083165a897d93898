package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
)

func readyNode(name string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
}

func runningPod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace, UID: types.UID("uid-" + name)},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
}

// TestHoldSteadyFailsWhenAPodStopsRunning: a hold with every node Ready
// and every pod Running passes; a pod that fails during it ends it with
// an error naming the pod.
func TestHoldSteadyFailsWhenAPodStopsRunning(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset(readyNode("node-000000"), runningPod("a"), runningPod("b"))
	c := &Cluster{Client: client}
	counter := newPodCounter(ctx, client)
	defer counter.stop()
	if err := holdSteady(ctx, c, 1500*time.Millisecond, counter); err != nil {
		t.Fatalf("a steady cluster failed the hold: %v", err)
	}

	failed := runningPod("b")
	failed.Status.Phase = corev1.PodFailed
	done := make(chan error, 1)
	go func() { done <- holdSteady(ctx, c, time.Minute, counter) }()
	if _, err := client.CoreV1().Pods(Namespace).UpdateStatus(ctx, failed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "pod b is Failed") {
			t.Errorf("hold ended with %v, want pod b named as Failed", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the hold went on after a pod stopped Running")
	}
}
