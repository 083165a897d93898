// Package clone creates a snapshot's objects in a kubesim cluster, in the
// snapshot's order, many at a time within a kind: owner references and
// volume claims pointed at the uids of the objects made in the source's
// objects' place (kubesim.io/source-uid), so the cluster's controllers
// adopt what is there rather than make it anew.
package clone

import (
	"context"
	"fmt"
	"io"
	"maps"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/util/retry"

	"github.com/kubesim/kubesim/internal/snapshot"
)

// Workers is how many creates run at once: as many as bench floor's load
// generator. A create waits mostly on etcd, not on CPU, so twice as
// many at once create twice as many a second until the API server's
// CPU is used up.
const Workers = 64

// Options say where to report, and how pods are loaded.
type Options struct {
	Progress io.Writer
	Terminal bool
	// Direct, if set, loads the pods the simulator runs straight into
	// etcd, Running; nil: through the API server, for the simulator to
	// start.
	Direct *Direct
}

// Result counts what a clone did, by kind.
type Result struct {
	Created map[string]int
	// Existing were there already (the default Namespaces, the
	// kubernetes Service, each namespace's default ServiceAccount).
	Existing map[string]int
	// Unserved are objects of kinds the cluster does not serve (a custom
	// resource whose CRD it lacks), left out.
	Unserved map[string]int
	// DroppedOwners counts owner references to objects not in the clone:
	// the garbage collector would delete their dependents.
	DroppedOwners int
	// Adopted counts the nodes handed to the clone's Karpenter with their
	// NodeClaims.
	Adopted int
}

// Summary is the result in a line.
func (r *Result) Summary() string {
	s := "created " + snapshot.Summary(r.Created)
	if len(r.Unserved) > 0 {
		s += "; skipped, kinds this cluster does not serve: " + snapshot.Summary(r.Unserved)
	}
	if r.Unserved["NodePool"]+r.Unserved["NodeClaim"] > 0 {
		s += " (NodePools and NodeClaims are Karpenter's: clone with --autoscaler karpenter)"
	}
	if r.Adopted > 0 {
		s += fmt.Sprintf("; %d nodes adopted by Karpenter with their NodeClaims", r.Adopted)
	}
	if r.DroppedOwners > 0 {
		s += fmt.Sprintf("; %d owner references to objects not in the snapshot dropped", r.DroppedOwners)
	}
	return s
}

// Load creates the objects in the cluster cfg reaches, in their order;
// consecutive objects of one kind are created together, Workers at a time.
// The first failure (other than an object that exists already) ends it.
func Load(ctx context.Context, cfg *rest.Config, objects []*unstructured.Unstructured, o Options) (*Result, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS = -1
	// The source's API server gave its warnings (a Pod Security warn
	// level, deprecated fields) when these objects were made; repeated
	// here they would be klog lines in create's output, one per object.
	cfg.WarningHandler = rest.NoWarnings{}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	protobuf := rest.CopyConfig(cfg)
	protobuf.ContentType = "application/vnd.kubernetes.protobuf"
	protobuf.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	typed, err := kubernetes.NewForConfig(protobuf)
	if err != nil {
		return nil, err
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	l := &loader{
		client: client,
		typed:  typed,
		mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco)),
		uids:   map[string]string{},
		result: &Result{Created: map[string]int{}, Existing: map[string]int{}, Unserved: map[string]int{}},
		o:      o,
	}
	if err := l.prepareAdoption(ctx, objects); err != nil {
		return l.result, err
	}
	for start := 0; start < len(objects); {
		end := start + 1
		for end < len(objects) && objects[end].GroupVersionKind() == objects[start].GroupVersionKind() {
			end++
		}
		if err := l.createAll(ctx, objects[start:end]); err != nil {
			return l.result, err
		}
		start = end
	}
	for _, c := range l.claims {
		if err := l.pointAtPods(ctx, c); err != nil {
			return l.result, fmt.Errorf("ResourceClaim %s/%s: %s", c.namespace, c.name, strings.Join(strings.Fields(err.Error()), " "))
		}
	}
	return l.result, nil
}

type loader struct {
	client dynamic.Interface
	typed  kubernetes.Interface
	mapper meta.RESTMapper
	o      Options

	mu     sync.Mutex
	uids   map[string]string // source uid → the clone's
	result *Result
	// direct is what writing pods straight into etcd needs (Options.Direct).
	direct *direct
	// claims are the ResourceClaims owned by or reserved for pods, which
	// come after them: pointed at the pods once those are made.
	claims []podsClaim
	// adoption, when the cluster runs Karpenter, hands it the source's
	// Karpenter nodes (karpenter.go).
	adoption *adoption
}

// createAll creates objects of one kind.
func (l *loader) createAll(ctx context.Context, objects []*unstructured.Unstructured) error {
	gvk := objects[0].GroupVersionKind()
	mapping, err := l.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		l.result.Unserved[gvk.Kind] += len(objects)
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", gvk.Kind, err)
	}
	if gvk.Kind == "Pod" && gvk.Group == "" && l.o.Direct != nil {
		if objects, err = l.createPodsDirect(ctx, objects); isNotDirect(err) {
			l.o.Direct = nil
			l.note("Pods are created through the API server, for the simulator to start: %v", err)
		} else if err != nil {
			return err
		}
		if len(objects) == 0 {
			if l.o.Terminal && l.o.Progress != nil {
				fmt.Fprintln(l.o.Progress)
			}
			return nil
		}
	}
	var done atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(Workers)
	for _, obj := range objects {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			if err := l.create(gctx, mapping, obj.DeepCopy()); err != nil {
				return fmt.Errorf("creating %s %s: %s", gvk.Kind, snapshot.Name(obj), strings.Join(strings.Fields(err.Error()), " "))
			}
			l.progress(gvk.Kind, int(done.Add(1)), len(objects))
			return nil
		})
	}
	err = g.Wait()
	if err == nil {
		err = context.Cause(ctx)
	}
	if l.o.Terminal && l.o.Progress != nil {
		fmt.Fprintln(l.o.Progress)
	}
	return err
}

// note says something to the user, on a line of its own.
func (l *loader) note(format string, args ...any) {
	if l.o.Progress != nil {
		l.mu.Lock()
		fmt.Fprintf(l.o.Progress, format+"\n", args...)
		l.mu.Unlock()
	}
}

func (l *loader) progress(kind string, done, total int) {
	if l.o.Terminal && l.o.Progress != nil {
		l.mu.Lock()
		fmt.Fprintf(l.o.Progress, "\rcreating %-32s %d/%d", kind+"s", done, total)
		l.mu.Unlock()
	}
}

// create makes one object, pointed at the clone's uids, and records its
// uid in the clone under its source uid.
func (l *loader) create(ctx context.Context, mapping *meta.RESTMapping, obj *unstructured.Unstructured) error {
	if madeByAPIServer(obj) {
		l.mu.Lock()
		l.result.Existing[obj.GetKind()]++
		l.mu.Unlock()
		return nil
	}
	sourceUID := obj.GetAnnotations()[snapshot.SourceUIDAnnotation]
	claim, forPods := claimOfPods(obj, mapping)
	if err := l.adopt(obj); err != nil {
		return err
	}
	l.mu.Lock()
	dropped := l.repoint(obj)
	l.result.DroppedOwners += dropped
	l.mu.Unlock()
	kind := obj.GetKind()
	var uid types.UID
	var err error
	if kind == "Pod" && obj.GetAPIVersion() == "v1" {
		uid, err = l.createPod(ctx, obj)
	} else {
		uid, err = l.createObject(ctx, mapping, obj)
	}
	if apierrors.IsAlreadyExists(err) {
		l.mu.Lock()
		l.result.Existing[kind]++
		l.mu.Unlock()
		return nil
	}
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if sourceUID != "" {
		l.uids[sourceUID] = string(uid)
	}
	if forPods {
		l.claims = append(l.claims, claim)
	}
	l.result.Created[kind]++
	return nil
}

// madeByAPIServer reports the Service default/kubernetes, which is not
// created: the clone's API server makes it, shortly after it is ready,
// with the first address of the service range. Created by the clone
// first, it would keep an address of the range's choosing.
func madeByAPIServer(obj *unstructured.Unstructured) bool {
	return obj.GetAPIVersion() == "v1" && obj.GetKind() == "Service" && obj.GetNamespace() == metav1.NamespaceDefault && obj.GetName() == "kubernetes"
}

// createObject creates obj through the dynamic client, and its status
// after it where a create drops it (a claim's allocation; a Node keeps
// the capacity it was created with).
func (l *loader) createObject(ctx context.Context, mapping *meta.RESTMapping, obj *unstructured.Unstructured) (types.UID, error) {
	var res dynamic.ResourceInterface = l.client.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		res = l.client.Resource(mapping.Resource).Namespace(obj.GetNamespace())
	}
	status, hasStatus := obj.Object["status"]
	made, err := res.Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	if hasStatus && obj.GetKind() == "ResourceClaim" {
		made.Object["status"] = status
		if _, err := res.UpdateStatus(ctx, made, metav1.UpdateOptions{}); err != nil {
			return "", fmt.Errorf("its status: %w", err)
		}
	}
	return made.GetUID(), nil
}

// createPod creates a pod in protobuf, not JSON: pods are most of a
// clone, and protobuf costs the API server (decoding the pod, encoding
// the answer) and this process (decoding the answer) a fraction of JSON.
func (l *loader) createPod(ctx context.Context, obj *unstructured.Unstructured) (types.UID, error) {
	pod := &corev1.Pod{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, pod); err != nil {
		return "", err
	}
	made, err := l.typed.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return made.UID, nil
}

// repoint makes obj refer to the clone's objects (l.mu held): owner
// references by their uids, a PV's claim by its uid, a Job's pods by its
// controller-uid label. Owner references to objects not made are dropped,
// and counted.
func (l *loader) repoint(obj *unstructured.Unstructured) (dropped int) {
	var owners []metav1.OwnerReference
	for _, ref := range obj.GetOwnerReferences() {
		if obj.GetKind() == "ResourceClaim" && ref.Kind == "Pod" {
			continue // its pod comes later: pointAtPods
		}
		if uid, ok := l.uids[string(ref.UID)]; ok {
			ref.UID = types.UID(uid)
			owners = append(owners, ref)
		} else {
			dropped++
		}
	}
	if len(obj.GetOwnerReferences()) > 0 {
		obj.SetOwnerReferences(owners)
	}
	switch obj.GetKind() {
	case "PersistentVolume":
		if uid, ok, _ := unstructured.NestedString(obj.Object, "spec", "claimRef", "uid"); ok {
			if mine, known := l.uids[uid]; known {
				_ = unstructured.SetNestedField(obj.Object, mine, "spec", "claimRef", "uid")
			} else {
				unstructured.RemoveNestedField(obj.Object, "spec", "claimRef", "uid")
			}
		}
	case "PersistentVolumeClaim":
		// Bound anew, as a claim naming its volume: the volume comes
		// next, carrying this claim's new uid. Marked bound, the claim
		// would be taken for one whose volume was lost.
		annotations := obj.GetAnnotations()
		delete(annotations, "pv.kubernetes.io/bind-completed")
		delete(annotations, "pv.kubernetes.io/bound-by-controller")
		obj.SetAnnotations(annotations)
	case "Job":
		unselectJob(obj)
	case "Pod":
		// Labels holding an owner's uid (a Job's controller-uid) hold
		// the clone's.
		labels := obj.GetLabels()
		for k, v := range labels {
			if uid, ok := l.uids[v]; ok {
				labels[k] = uid
			}
		}
		obj.SetLabels(labels)
	case "ResourceClaim":
		unstructured.RemoveNestedField(obj.Object, "status", "reservedFor")
	}
	return dropped
}

// podsClaim is a ResourceClaim owned by pods (made from a pod's template)
// or reserved for them in the source: both name the pods by their source
// uids.
type podsClaim struct {
	resource        schema.GroupVersionResource
	namespace, name string
	owners          []metav1.OwnerReference
	reservedFor     []any
}

// claimOfPods is obj's podsClaim, if it is a ResourceClaim of pods.
func claimOfPods(obj *unstructured.Unstructured, mapping *meta.RESTMapping) (podsClaim, bool) {
	if obj.GetKind() != "ResourceClaim" {
		return podsClaim{}, false
	}
	c := podsClaim{resource: mapping.Resource, namespace: obj.GetNamespace(), name: obj.GetName()}
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Kind == "Pod" {
			c.owners = append(c.owners, ref)
		}
	}
	reserved, _, _ := unstructured.NestedSlice(obj.Object, "status", "reservedFor")
	for _, r := range reserved {
		if m, ok := r.(map[string]any); ok && m["resource"] == "pods" && m["apiGroup"] == nil {
			c.reservedFor = append(c.reservedFor, r)
		}
	}
	return c, len(c.owners) > 0 || len(c.reservedFor) > 0
}

// pointAtPods gives a claim its owner pods and its reservations for pods
// again, by the clone's pods' uids (those not cloned are left out): the
// controller-manager's claim controller finds each pod's claim by its
// owner, and the kubelet simulator starts a pod once its claims are
// reserved for it, as the scheduler reserves them for a pod it binds —
// but a cloned pod comes bound.
func (l *loader) pointAtPods(ctx context.Context, c podsClaim) error {
	var owners []metav1.OwnerReference
	for _, ref := range c.owners {
		if uid, ok := l.uids[string(ref.UID)]; ok {
			ref.UID = types.UID(uid)
			owners = append(owners, ref)
		} else {
			l.result.DroppedOwners++
		}
	}
	var reserved []any
	for _, r := range c.reservedFor {
		entry := maps.Clone(r.(map[string]any))
		if uid, ok := l.uids[fmt.Sprint(entry["uid"])]; ok {
			entry["uid"] = uid
			reserved = append(reserved, entry)
		}
	}
	res := l.client.Resource(c.resource).Namespace(c.namespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		claim, err := res.Get(ctx, c.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(owners) > 0 {
			claim.SetOwnerReferences(append(claim.GetOwnerReferences(), owners...))
			if claim, err = res.Update(ctx, claim, metav1.UpdateOptions{}); err != nil {
				return err
			}
			owners = nil // made; a conflict after retries the status alone
		}
		if len(reserved) == 0 {
			return nil
		}
		if err := unstructured.SetNestedSlice(claim.Object, reserved, "status", "reservedFor"); err != nil {
			return err
		}
		_, err = res.UpdateStatus(ctx, claim, metav1.UpdateOptions{})
		return err
	})
}

// jobUIDLabels are the labels a Job's generated selector matches on, with
// the Job's own uid as their value.
var jobUIDLabels = []string{"batch.kubernetes.io/controller-uid", "controller-uid"}

// unselectJob leaves a Job's generated selector to the API server, which
// makes it of the new Job's uid (one of the source's is refused).
func unselectJob(obj *unstructured.Unstructured) {
	if manual, _, _ := unstructured.NestedBool(obj.Object, "spec", "manualSelector"); manual {
		return
	}
	for _, path := range [][]string{{"spec", "selector", "matchLabels"}, {"spec", "template", "metadata", "labels"}} {
		labels, _, _ := unstructured.NestedStringMap(obj.Object, path...)
		for _, key := range jobUIDLabels {
			delete(labels, key)
		}
		if len(labels) == 0 {
			unstructured.RemoveNestedField(obj.Object, path...)
		} else {
			_ = unstructured.SetNestedStringMap(obj.Object, labels, path...)
		}
	}
	if sel, _, _ := unstructured.NestedMap(obj.Object, "spec", "selector"); len(sel) == 0 {
		unstructured.RemoveNestedField(obj.Object, "spec", "selector")
	}
}
