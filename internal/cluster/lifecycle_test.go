package cluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/scale"
)

func testProvider(t *testing.T) (*Provider, *strings.Builder) {
	t.Helper()
	dir := t.TempDir()
	out := &strings.Builder{}
	return &Provider{Home: filepath.Join(dir, "home"), Kubeconfig: filepath.Join(dir, "kubeconfig"), Out: out}, out
}

func mkdirs(t *testing.T, dirs ...string) {
	t.Helper()
	for _, dir := range dirs {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

// Whatever point of a restore's swap a crash stopped at, recoverEtcd
// leaves one whole etcd/ and nothing else.
func TestRecoverEtcdAfterACrashAnywhereInARestore(t *testing.T) {
	for _, tc := range []struct {
		name    string
		present []string // of etcd, etcd.old, etcd.restore
		want    string   // which one's data etcd/ then holds
		said    string
	}{
		{"before the swap", []string{"etcd", "etcd.restore"}, "etcd", ""},
		{"between the renames", []string{"etcd.old", "etcd.restore"}, "etcd.old", "interrupted"},
		{"after the renames", []string{"etcd", "etcd.old"}, "etcd", ""},
		{"untouched", []string{"etcd"}, "etcd", ""},
	} {
		p, out := testProvider(t)
		d := clusterdir.For(p.Home, "blue")
		for _, name := range tc.present {
			mkdirs(t, filepath.Join(d.Path, name))
			if err := os.WriteFile(filepath.Join(d.Path, name, "origin"), []byte(name), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.recoverEtcd(d); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got, _ := os.ReadFile(filepath.Join(d.Etcd(), "origin")); string(got) != tc.want {
			t.Errorf("%s: etcd/ holds %q's data, want %q's", tc.name, got, tc.want)
		}
		if exists(oldEtcd(d)) || exists(stagedEtcd(d)) {
			t.Errorf("%s: leftovers remain", tc.name)
		}
		if !strings.Contains(out.String(), tc.said) {
			t.Errorf("%s: said %q, want it to mention %q", tc.name, out, tc.said)
		}
	}
	p, _ := testProvider(t)
	d := clusterdir.For(p.Home, "empty")
	mkdirs(t, d.Path)
	if err := p.recoverEtcd(d); err == nil || !strings.Contains(err.Error(), "has no etcd data") {
		t.Errorf("a cluster with no etcd/ at all: %v", err)
	}
}

// One command at a time changes a cluster (a scale of its nodes among
// them): another waits, or gives up when told to; one that waited on a
// delete finds the cluster gone.
func TestOperationsOnAClusterDoNotOverlap(t *testing.T) {
	p, out := testProvider(t)
	d := newTestCluster(t, p, "blue")
	unlock, err := p.lockOperation(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := p.Stop(ctx, "blue"); err == nil || !strings.Contains(err.Error(), "gave up waiting") {
		t.Errorf("stop while another command works on the cluster: %v", err)
	}
	if err := p.ScaleNodes(ctx, "blue", scale.Options{Replicas: 3}); err == nil || !strings.Contains(err.Error(), "gave up waiting") {
		t.Errorf("scale node while another command works on the cluster: %v", err)
	}
	if !strings.Contains(out.String(), `Waiting for another kubesim command working on cluster "blue"`) {
		t.Errorf("the wait is not told: %q", out)
	}

	// A delete waits for the lock; a stop waiting behind it then finds
	// the cluster gone.
	var unlocked atomic.Int64
	time.AfterFunc(100*time.Millisecond, func() { unlocked.Store(time.Now().UnixNano()); unlock() })
	if err := p.Delete(context.Background(), "blue"); err != nil {
		t.Fatalf("delete after the lock is released: %v", err)
	}
	if unlocked.Load() == 0 {
		t.Fatal("delete went ahead while another command held the cluster")
	}
	if err := p.Stop(context.Background(), "blue"); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("stop after a delete: %v", err)
	}
	if err := p.ScaleNodes(context.Background(), "blue", scale.Options{Replicas: 3}); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("scale node after a delete: %v", err)
	}

	// One that waited while the cluster was deleted finds it gone.
	d = newTestCluster(t, p, "red")
	unlock, err = p.lockOperation(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	// The stop says it waits before it does: the directory goes only once
	// it is waiting on the lock.
	waiting := &sayWatcher{want: `Waiting for another kubesim command working on cluster "red"`, said: make(chan struct{})}
	p.Out = waiting
	stopped := make(chan error)
	go func() { stopped <- p.Stop(context.Background(), "red") }()
	select {
	case <-waiting.said:
	case err := <-stopped:
		t.Fatalf("stop did not wait for the command holding the cluster: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("stop neither waited for the lock nor returned")
	}
	if err := os.RemoveAll(d.Path); err != nil {
		t.Fatal(err)
	}
	unlock()
	if err := <-stopped; err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("stop that waited on a delete: %v", err)
	}
}

// A directory a crash left without its cluster.yaml is removed by delete
// --all, which lists no cluster there.
func TestDeleteAllRemovesHalfMadeClusters(t *testing.T) {
	p, _ := testProvider(t)
	newTestCluster(t, p, "whole")
	half := clusterdir.For(p.Home, "half")
	mkdirs(t, filepath.Join(half.Path, "pki"))
	if err := p.DeleteAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if names, _ := clusterdir.ListDirs(p.Home); len(names) > 0 {
		t.Errorf("left after delete --all: %v", names)
	}
}

// sayWatcher is a Provider's Out that closes said once want is written.
type sayWatcher struct {
	mu   sync.Mutex
	text strings.Builder
	want string
	said chan struct{}
}

func (w *sayWatcher) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	had := strings.Contains(w.text.String(), w.want)
	w.text.Write(b)
	if !had && strings.Contains(w.text.String(), w.want) {
		close(w.said)
	}
	return len(b), nil
}
