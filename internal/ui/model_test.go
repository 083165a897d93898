package ui

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
)

// Each change after the snapshot comes in a batch, the second as the
// first: the sets of changed objects are swapped at each batch, and the
// informers' handlers mark the new ones.
func TestModelSendsEachChangeAfterTheSnapshot(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}})
	factory := informers.NewSharedInformerFactory(client, 0)
	m := newModel(factory)
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	first, ch, err := m.subscribe()
	if err != nil {
		t.Fatal(err)
	}
	var snap Delta
	if err := json.Unmarshal(first, &snap); err != nil || !snap.Snapshot || len(snap.Nodes) != 1 {
		t.Fatalf("snapshot %s: %v", first, err)
	}
	for _, label := range []string{"a", "b"} {
		n, _ := client.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
		n.Labels = map[string]string{"step": label}
		if _, err := client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for got := ""; got != label; {
			if time.Now().After(deadline) {
				t.Fatalf("no batch with the node labelled %q", label)
			}
			m.flush()
			select {
			case msg := <-ch:
				var d Delta
				if err := json.Unmarshal(msg, &d); err != nil {
					t.Fatal(err)
				}
				for _, n := range d.Nodes {
					got = n.Labels["step"]
				}
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"},
		Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/1 nodes are available"}}}}
	if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := client.CoreV1().Pods("default").Delete(ctx, "p", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for gone := false; !gone; {
		if time.Now().After(deadline) {
			t.Fatal("no batch saying the pod is gone")
		}
		m.flush()
		select {
		case msg := <-ch:
			var d Delta
			_ = json.Unmarshal(msg, &d)
			gone = len(d.PodsGone) == 1 && d.PodsGone[0] == "default/p"
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func TestPodOfNamesTheDeploymentAndTheReason(t *testing.T) {
	yes := true
	p := podOf(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-7d9c5b6f4-x2x4k", Namespace: "default", Labels: map[string]string{"pod-template-hash": "7d9c5b6f4"},
		OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web-7d9c5b6f4", Controller: &yes}}},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Message: "0/3 nodes are available"}}}})
	if p.Owner != "Deployment/web" || p.Reason != "0/3 nodes are available" {
		t.Errorf("podOf: %+v", p)
	}
}
