// Package etcdpods writes pods straight into a cluster's etcd, each as
// the API server stores a pod it creates: upstream's pod strategy prepares
// and validates it (system metadata, generation, status reset, QoS class),
// and it is encoded as the API server encodes pods for storage. A clone
// loads its pods this way, each with the status the simulator gives it,
// in one write; through the API server that is a create and a status
// patch, the second costing more than the first. What the API server
// would add is left out: admission (the source's API server admitted the
// pods; they carry what it added) and managed fields.
package etcdpods

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc/grpclog"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	api "k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install" // the core kinds' conversions and defaults
	"k8s.io/kubernetes/pkg/capabilities"
	podregistry "k8s.io/kubernetes/pkg/registry/core/pod"
)

// Prefix is where the API server keeps objects in etcd (its --etcd-prefix
// default, which kubesim keeps).
const Prefix = "/registry/"

// Store writes pods into one cluster's etcd.
type Store struct {
	client  *clientv3.Client
	encoder runtime.Encoder
}

// Open connects to etcd's unix socket (no TLS: its directory guards it).
func Open(socket string) (*Store, error) {
	// gRPC's reconnect chatter would reach the user's terminal.
	grpclog.SetLoggerV2(grpclog.NewLoggerV2(io.Discard, io.Discard, io.Discard))
	client, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{"unix://" + socket},
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return nil, fmt.Errorf("etcd at %s: %w", socket, err)
	}
	info, ok := runtime.SerializerInfoForMediaType(legacyscheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		client.Close()
		return nil, errors.New("no protobuf serializer for core kinds")
	}
	return &Store{client: client, encoder: legacyscheme.Codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion)}, nil
}

// Close disconnects.
func (s *Store) Close() error { return s.client.Close() }

// Prepare makes pod what a create through the API server makes of it
// before it is stored: defaulted, its system metadata (uid, creation
// time) filled, upstream's pod strategy applied (its status reset to
// Pending) and its validation passed. An invalid pod gets the API
// server's error.
func Prepare(pod *corev1.Pod) (*corev1.Pod, error) {
	allowPrivileged()
	in := pod.DeepCopy()
	legacyscheme.Scheme.Default(in)
	internal := &api.Pod{}
	if err := legacyscheme.Scheme.Convert(in, internal, nil); err != nil {
		return nil, err
	}
	// What a client may not set on a create, the API server clears.
	internal.DeletionTimestamp, internal.DeletionGracePeriodSeconds, internal.ManagedFields = nil, nil, nil
	rest.FillObjectMetaSystemFields(internal)
	ctx := genericapirequest.WithNamespace(context.Background(), internal.Namespace)
	if err := rest.BeforeCreate(podregistry.Strategy, ctx, internal); err != nil {
		return nil, err
	}
	return toV1(internal)
}

// UpdateStatus is prepared after a write of pod's status, as the API
// server makes it: the status strategy applied (only the status changes)
// and its validation passed.
func UpdateStatus(prepared, pod *corev1.Pod) (*corev1.Pod, error) {
	old, err := toInternal(prepared)
	if err != nil {
		return nil, err
	}
	updated, err := toInternal(pod)
	if err != nil {
		return nil, err
	}
	// An update must name the version it changes (validation refuses
	// one without); any will do here, the pod being written only once.
	old.ResourceVersion, updated.ResourceVersion = "1", "1"
	ctx := genericapirequest.WithNamespace(context.Background(), pod.Namespace)
	if err := rest.BeforeUpdate(podregistry.StatusStrategy, ctx, updated, old); err != nil {
		return nil, err
	}
	return toV1(updated)
}

func toInternal(pod *corev1.Pod) (*api.Pod, error) {
	out := &api.Pod{}
	return out, legacyscheme.Scheme.Convert(pod.DeepCopy(), out, nil)
}

func toV1(pod *api.Pod) (*corev1.Pod, error) {
	out := &corev1.Pod{}
	return out, legacyscheme.Scheme.Convert(pod, out, nil)
}

// allowPrivileged gives this process the API server's capabilities:
// kubesim's runs with --allow-privileged=true (a cluster with extraArgs
// for it loads no pods here), and upstream's pod validation reads them
// from a process-wide default that refuses privileged containers, so a
// source's privileged DaemonSet pod would be refused here alone. Set on
// first use, not at init: the API server's own process links this
// package too, and the capabilities are set once per process.
var allowPrivileged = sync.OnceFunc(func() { capabilities.Setup(true, 0) })

// Key is where the API server keeps pod.
func Key(pod *corev1.Pod) string { return Prefix + "pods/" + pod.Namespace + "/" + pod.Name }

// Encode is pod as the API server stores it.
func (s *Store) Encode(pod *corev1.Pod) ([]byte, error) {
	stored := pod.DeepCopy()
	stored.ResourceVersion = "" // etcd's revision is the version
	return runtime.Encode(s.encoder, stored)
}

// Limits of one transaction: etcd's (embed's defaults, which kubesim
// keeps) are 128 operations and 1.5 MiB.
const (
	BatchOps   = 100
	batchBytes = 1 << 20
)

// Create writes the encoded pods that are not there yet, many to a
// transaction, as creates (a key that exists is left alone). existing
// says which were there already.
func (s *Store) Create(ctx context.Context, keys []string, values [][]byte) (existing []bool, err error) {
	existing = make([]bool, len(keys))
	for start := 0; start < len(keys); {
		end, size := start, 0
		for end < len(keys) && end-start < BatchOps && (end == start || size+len(values[end]) <= batchBytes) {
			size += len(values[end])
			end++
		}
		if err := s.createBatch(ctx, keys[start:end], values[start:end], existing[start:end]); err != nil {
			return existing, err
		}
		start = end
	}
	return existing, nil
}

// createBatch creates all of keys in one transaction, or, if one exists,
// each on its own.
func (s *Store) createBatch(ctx context.Context, keys []string, values [][]byte, existing []bool) error {
	ok, err := s.txn(ctx, keys, values)
	if err != nil || ok || len(keys) == 1 {
		if err == nil && !ok {
			existing[0] = true
		}
		return err
	}
	for i := range keys {
		if ok, err = s.txn(ctx, keys[i:i+1], values[i:i+1]); err != nil {
			return err
		}
		existing[i] = !ok
	}
	return nil
}

func (s *Store) txn(ctx context.Context, keys []string, values [][]byte) (bool, error) {
	cmps := make([]clientv3.Cmp, len(keys))
	puts := make([]clientv3.Op, len(keys))
	for i, k := range keys {
		cmps[i] = clientv3.Compare(clientv3.CreateRevision(k), "=", 0)
		puts[i] = clientv3.OpPut(k, string(values[i]))
	}
	resp, err := s.client.Txn(ctx).If(cmps...).Then(puts...).Commit()
	if err != nil {
		return false, fmt.Errorf("writing pods to etcd: %w", err)
	}
	return resp.Succeeded, nil
}
