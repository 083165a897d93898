package nodecost

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
)

func poolNode(name, uid string, created time.Time) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(uid), CreationTimestamp: metav1.NewTime(created),
		Labels: map[string]string{
			"karpenter.sh/nodepool":            "default",
			"node.kubernetes.io/instance-type": "c-4x-amd64-linux",
			"karpenter.sh/capacity-type":       "on-demand",
			"eks-node-viewer/instance-price":   "0.170000",
		}}}
}

// waitLedger waits until the ledger has n entries and returns them.
func waitLedger(t *testing.T, path string, n int) []Entry {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := ReadLedger(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) >= n || time.Now().After(deadline) {
			if len(got) != n {
				t.Fatalf("ledger has %d entries, want %d: %+v", len(got), n, got)
			}
			return got
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Record, started, reconciles the ledger with the cluster (closes the
// nodes that went meanwhile, opens those that came), then follows it.
func TestRecordReconcilesThenFollows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nodes.jsonl")
	created := time.Now().Add(-time.Hour).Truncate(time.Second)
	// Before this start: "old" and "kept" were recorded, and "old" has gone
	// since.
	l, err := openLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []Entry{
		{Event: Up, At: created, Node: "kwok-old", UID: "u-old", NodePool: "default", PricePerHour: 1},
		{Event: Up, At: created, Node: "kwok-kept", UID: "u-kept", NodePool: "default", PricePerHour: 1},
	} {
		if err := l.append(e); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	static := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-000000", UID: "u-static"}}
	client := fake.NewClientset(poolNode("kwok-kept", "u-kept", created), poolNode("kwok-new", "u-new", created), static)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := time.Now()
	done := make(chan error, 1)
	go func() { done <- Record(ctx, client, path) }()

	got := waitLedger(t, path, 4)[2:]
	var opened, closed *Entry
	for i := range got {
		switch got[i].UID {
		case "u-new":
			opened = &got[i]
		case "u-old":
			closed = &got[i]
		}
	}
	want := Entry{Event: Up, At: created, Node: "kwok-new", UID: "u-new", NodePool: "default",
		InstanceType: "c-4x-amd64-linux", CapacityType: "on-demand", PricePerHour: 0.17}
	if opened == nil || !opened.At.Equal(want.At) {
		t.Fatalf("the node that came meanwhile: %+v, want %+v", opened, want)
	}
	opened.At = want.At
	if *opened != want {
		t.Errorf("the node that came meanwhile: %+v, want %+v", *opened, want)
	}
	if closed == nil || closed.Event != Down || closed.At.Before(started) || time.Since(closed.At) > time.Minute || !strings.Contains(closed.Note, "recorder was down") {
		t.Errorf("the node that went meanwhile: %+v, want a Down at this start (%s) that says why", closed, started)
	}

	// Then: a node whose deletion began at its deletionTimestamp is paid
	// for until it is gone; one that comes is opened; the static node is
	// never in the ledger.
	kept := poolNode("kwok-kept", "u-kept", created)
	kept.DeletionTimestamp = &metav1.Time{Time: created.Add(30 * time.Second)}
	nodes := client.CoreV1().Nodes()
	if _, err := nodes.Update(ctx, kept, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	if err := nodes.Delete(ctx, "kwok-kept", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	got = waitLedger(t, path, 5)
	if e := got[4]; e.Event != Down || e.UID != "u-kept" || e.At.Before(deleted) || time.Since(e.At) > time.Minute || e.Note != "" {
		t.Errorf("a node deleted: %+v, want a Down when it was gone (after %s), not at its deletionTimestamp", e, deleted)
	}
	later := time.Now().Truncate(time.Second)
	if _, err := nodes.Create(ctx, poolNode("kwok-later", "u-later", later), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got = waitLedger(t, path, 6)
	if e := got[5]; e.Event != Up || e.UID != "u-later" || !e.At.Equal(later) {
		t.Errorf("a node that came: %+v, want an Up at its creationTimestamp %s", e, later)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Record at the end: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Record did not return once its context was done")
	}
	// A second start with nothing changed writes nothing.
	ctx2, cancel2 := context.WithCancel(context.Background())
	done2 := make(chan error, 1)
	go func() { done2 <- Record(ctx2, client, path) }()
	// Create one more node so there is something to wait for after the
	// reconciliation: only it may be new.
	if _, err := nodes.Create(ctx2, poolNode("kwok-last", "u-last", later), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got = waitLedger(t, path, 7)
	if e := got[6]; e.UID != "u-last" {
		t.Errorf("a second start wrote %+v; want only the new node's Up", e)
	}
	cancel2()
	<-done2
	if again := waitLedger(t, path, 7); len(again) != 7 {
		t.Errorf("ledger after the second start: %+v", again)
	}
}
