//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSnapshot saves a cluster, deletes an object, restores it and finds
// the object back; bad snapshot files are refused and change nothing.
func TestSnapshot(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.must("create", "cluster", "--name", "snap")
	client := e.client()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "precious"}, Data: map[string]string{"a": "1"}}
	if _, err := client.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	snap := filepath.Join(dir, "s.db")
	e.must("snapshot", "save", "--name", "snap", "--path", snap)

	if err := client.CoreV1().ConfigMaps("default").Delete(ctx, "precious", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// Bad files: refused with a clear error, the cluster still running as it was.
	data, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.db")
	writeFile(t, truncated, data[:len(data)/2])
	flipped := filepath.Join(dir, "flipped.db")
	corrupt := append([]byte(nil), data...)
	corrupt[len(corrupt)/3] ^= 0xff
	writeFile(t, flipped, corrupt)
	foreign := filepath.Join(dir, "notes.txt")
	writeFile(t, foreign, []byte("not a snapshot\n"))
	e.fails("not an etcd snapshot", "snapshot", "restore", "--name", "snap", "--path", truncated)
	e.fails("corrupt", "snapshot", "restore", "--name", "snap", "--path", flipped)
	e.fails("not an etcd snapshot", "snapshot", "restore", "--name", "snap", "--path", foreign)
	e.fails("no such file", "snapshot", "restore", "--name", "snap", "--path", filepath.Join(dir, "missing.db"))
	e.fails("--path: required", "snapshot", "save", "--name", "snap")
	if _, err := e.client().CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Fatalf("cluster unusable after refused restores: %v", err)
	}
	if _, err := e.client().CoreV1().ConfigMaps("default").Get(ctx, "precious", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a refused restore changed the data: %v", err)
	}

	e.must("snapshot", "restore", "--name", "snap", "--path", snap)
	got, err := e.client().CoreV1().ConfigMaps("default").Get(ctx, "precious", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("deleted configmap not back after restore: %v", err)
	}
	if got.Data["a"] != "1" {
		t.Errorf("restored configmap data %v", got.Data)
	}

	// A stopped cluster cannot be snapshotted, but can be restored.
	e.must("stop", "cluster", "--name", "snap")
	e.fails(`cluster "snap" is stopped`, "snapshot", "save", "--name", "snap", "--path", filepath.Join(dir, "x.db"))
	e.must("snapshot", "restore", "--name", "snap", "--path", snap)
	e.must("start", "cluster", "--name", "snap")
	if _, err := e.client().CoreV1().ConfigMaps("default").Get(ctx, "precious", metav1.GetOptions{}); err != nil {
		t.Fatalf("configmap missing after restore into a stopped cluster: %v", err)
	}

	// A restore killed between its two renames leaves etcd.old/ and the
	// staged etcd.restore/ but no etcd/: the next start rolls back to the
	// data as it was, says so, and does not come up empty.
	e.must("stop", "cluster", "--name", "snap")
	etcd := filepath.Join(e.clusterDir("snap"), "etcd")
	if err := os.Rename(etcd, etcd+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(etcd+".restore/member", 0o700); err != nil {
		t.Fatal(err)
	}
	if out := e.must("start", "cluster", "--name", "snap").stderr; !strings.Contains(out, "restore was interrupted") {
		t.Errorf("start after an interrupted restore does not say so: %s", out)
	}
	if _, err := e.client().CoreV1().ConfigMaps("default").Get(ctx, "precious", metav1.GetOptions{}); err != nil {
		t.Fatalf("data lost after an interrupted restore: %v", err)
	}
	for _, leftover := range []string{etcd + ".old", etcd + ".restore"} {
		if _, err := os.Stat(leftover); !os.IsNotExist(err) {
			t.Errorf("%s left behind: %v", leftover, err)
		}
	}
}
