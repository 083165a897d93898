package cluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	clientsnapshot "go.etcd.io/etcd/client/v3/snapshot"
	"go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.uber.org/zap"
	"google.golang.org/grpc/grpclog"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/controlplane"
	"github.com/kubesim/kubesim/internal/supervisor"
)

// SnapshotSave writes an etcd snapshot of a running cluster to path.
func (p *Provider) SnapshotSave(ctx context.Context, name, path string) error {
	d, c, err := p.openRunning(name)
	if err != nil {
		return err
	}
	if err := saveEtcd(ctx, d, c, path); err != nil {
		return fmt.Errorf("saving snapshot of cluster %q to %s: %w", name, path, err)
	}
	p.logf("Saved snapshot of cluster %q to %s", name, path)
	return nil
}

// saveEtcd writes an etcd snapshot of the running cluster d to path.
func saveEtcd(ctx context.Context, d clusterdir.Dir, c *v1alpha1.Cluster, path string) error {
	// gRPC's reconnect chatter would reach the user's terminal; errors that
	// matter come back as the returned error.
	grpclog.SetLoggerV2(grpclog.NewLoggerV2(io.Discard, io.Discard, io.Discard))
	tlsConfig, err := controlplane.EtcdClientTLS(d).ClientConfig()
	if err != nil {
		return err
	}
	cfg := clientv3.Config{
		Endpoints:   []string{controlplane.EtcdURL(c)},
		TLS:         tlsConfig,
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	}
	_, err = clientsnapshot.SaveWithVersion(ctx, zap.NewNop(), cfg, path)
	return err
}

// SnapshotRestore replaces a cluster's data with a snapshot. The snapshot
// is checked and unpacked before the cluster is touched; a running cluster
// is stopped around the swap and started again. A crash at any point
// leaves the cluster's data whole, as before or as after (recoverEtcd).
func (p *Provider) SnapshotRestore(ctx context.Context, name, path string, wait time.Duration) error {
	source, err := checkSnapshot(path)
	if err != nil {
		return fmt.Errorf("snapshot %s: %w", path, err)
	}
	return p.operate(ctx, name, func(clusterdir.Dir) error {
		d, c, err := p.open(name)
		if err != nil {
			return err
		}
		if err := p.recoverEtcd(d); err != nil {
			return err
		}
		defer os.RemoveAll(stagedEtcd(d))
		if err := stageEtcd(d, c, path); err != nil {
			return fmt.Errorf("snapshot %s cannot be restored: %w", path, err)
		}
		wasRunning := supervisor.Running(d)
		if wasRunning {
			if err := supervisor.Stop(ctx, d, p.logf); err != nil {
				return err
			}
		}
		// Stopped, its data can be read: is the snapshot of this cluster?
		what := ""
		if _, uid, err := scanData(filepath.Join(d.Etcd(), "member", "snap", "db")); err == nil && uid != "" && source != "" && uid != source {
			what = fmt.Sprintf(", a snapshot of another cluster (its kube-system namespace is %s, %q's was %s): %q now holds that cluster's objects", source, name, uid, name)
		}
		if err := swapEtcd(d); err != nil {
			return err
		}
		if wasRunning {
			if err := p.recordKubeconfig(d); err != nil {
				return err
			}
			if err := supervisor.Launch(ctx, p.Home, d, wait); err != nil {
				return fmt.Errorf("restored cluster %q from %s, but starting it again failed: %w", name, path, err)
			}
			if err := p.useContext(d); err != nil {
				return err
			}
		}
		p.logf("Restored cluster %q from %s%s", name, path, what)
		return nil
	})
}

// stageEtcd unpacks the snapshot at path as d's next etcd data
// (stagedEtcd), for swapEtcd to put in place.
func stageEtcd(d clusterdir.Dir, c *v1alpha1.Cluster, path string) error {
	return snapshot.NewV3(zap.NewNop()).Restore(snapshot.RestoreConfig{
		SnapshotPath:        path,
		Name:                "default", // as the etcd component names its member
		OutputDataDir:       stagedEtcd(d),
		PeerURLs:            []string{controlplane.EtcdPeerURL(c)},
		InitialCluster:      "default=" + controlplane.EtcdPeerURL(c),
		InitialClusterToken: "etcd-cluster",
	})
}

// checkSnapshot tells a good snapshot of a Kubernetes cluster from a
// truncated or corrupt file and from anything else, without changing it,
// and returns the uid of its kube-system namespace ("" if it has none).
func checkSnapshot(path string) (clusterUID string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", err
	}
	// etcd appends a SHA-256 of the database, which is a whole number of
	// 512-byte pages long.
	size := info.Size()
	if size < 512 || size%512 != sha256.Size {
		return "", errors.New("not an etcd snapshot (make one with kubesim snapshot save)")
	}
	h := sha256.New()
	if _, err := io.CopyN(h, f, size-sha256.Size); err != nil {
		return "", err
	}
	want := make([]byte, sha256.Size)
	if _, err := io.ReadFull(f, want); err != nil {
		return "", err
	}
	if !bytes.Equal(h.Sum(nil), want) {
		return "", errors.New("corrupt: its checksum does not match its contents")
	}
	kubernetes, clusterUID, err := scanData(path)
	if err == nil && !kubernetes {
		err = errors.New("holds no Kubernetes objects: it is not a snapshot of a Kubernetes cluster")
	}
	return clusterUID, err
}

// scanData reads an etcd database: whether it holds Kubernetes objects
// (keys under /registry/, where the API server keeps every object), and
// the uid of its kube-system namespace, which is made once with a cluster
// and never again: it tells one cluster's data from another's.
func scanData(path string) (kubernetes bool, clusterUID string, err error) {
	defer func() {
		if r := recover(); r != nil { // bbolt panics on some malformed pages
			err = fmt.Errorf("corrupt: %v", r)
		}
	}()
	db, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return false, "", fmt.Errorf("corrupt: %w", err)
	}
	defer db.Close()
	var kubeSystem []byte
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("key"))
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			var kv mvccpb.KeyValue
			if kv.Unmarshal(v) != nil {
				continue
			}
			kubernetes = kubernetes || bytes.HasPrefix(kv.Key, []byte("/registry/"))
			// Keys are revisions: the last value is the newest.
			if string(kv.Key) == "/registry/namespaces/kube-system" && len(kv.Value) > 0 {
				kubeSystem = kv.Value
			}
		}
		return nil
	})
	if err != nil {
		return false, "", fmt.Errorf("corrupt: %w", err)
	}
	if obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(kubeSystem, nil, nil); err == nil {
		if ns, ok := obj.(*corev1.Namespace); ok {
			clusterUID = string(ns.UID)
		}
	}
	return kubernetes, clusterUID, nil
}
