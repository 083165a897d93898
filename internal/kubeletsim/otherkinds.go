package kubeletsim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"text/template"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/kubesim/kubesim/internal/stage"
)

// otherKinds runs a stage runner for each kind besides Node and Pod that
// some stage names (a PersistentVolumeClaim, a custom resource…): started
// when the first such stage appears, stopped when the last one goes.
type otherKinds struct {
	ctx       context.Context
	dynamic   dynamic.Interface
	discovery discovery.DiscoveryInterface
	mapper    *restmapper.DeferredDiscoveryRESTMapper
	recorder  record.EventRecorder
	version   func() string
	writer    *objectWriter

	mu      sync.Mutex
	running map[schema.GroupKind]*otherKind
	skipped map[schema.GroupKind]bool // built-in stages' kinds not served, said once
	wg      sync.WaitGroup
}

func newOtherKinds(ctx context.Context, config *rest.Config, dyn dynamic.Interface, disc discovery.CachedDiscoveryInterface,
	recorder record.EventRecorder, version func() string) *otherKinds {
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(disc)
	return &otherKinds{
		ctx:       ctx,
		dynamic:   dyn,
		discovery: disc,
		mapper:    mapper,
		writer:    newObjectWriter(config, mapper),
		recorder:  recorder,
		version:   version,
		running:   map[schema.GroupKind]*otherKind{},
		skipped:   map[schema.GroupKind]bool{},
	}
}

// update gives every kind its stages. Kinds the API server does not serve
// (yet: a CRD still being established) are an error, so the caller retries.
func (o *otherKinds) update(stages []*stage.Stage) error {
	wanted := map[schema.GroupKind]bool{}
	userWants := map[schema.GroupKind]bool{}
	for _, s := range stages {
		group, kind := s.GroupKind()
		gk := schema.GroupKind{Group: group, Kind: kind}
		if gk.Group == "" && (gk.Kind == "Node" || gk.Kind == "Pod") {
			continue
		}
		wanted[gk] = true
		userWants[gk] = userWants[gk] || s.Revision != stage.BuiltinRevision
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for gk, k := range o.running {
		if !wanted[gk] {
			k.cancel()
			delete(o.running, gk)
			klog.InfoS("no stages left for kind; stopped following it", "kind", gk)
		}
	}
	var errs []error
	for gk := range wanted {
		lifecycle := stage.NewLifecycle(gk.Group, gk.Kind, stages)
		if k, ok := o.running[gk]; ok {
			k.runner.setLifecycle(lifecycle)
			continue
		}
		k, err := o.start(gk, lifecycle)
		var notServed *kindNotServed
		if errors.As(err, &notServed) && !userWants[gk] {
			// Only a built-in stage names it (ResourceClaims, in a
			// cluster without DRA): nothing to wait for.
			if !o.skipped[gk] {
				klog.InfoS("the cluster does not serve a kind built-in stages name; they are left out", "kind", gk)
				o.skipped[gk] = true
			}
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		o.running[gk] = k
	}
	return errors.Join(errs...)
}

func (o *otherKinds) start(gk schema.GroupKind, lifecycle *stage.Lifecycle) (*otherKind, error) {
	mapping, err := o.mapper.RESTMapping(gk)
	if meta.IsNoMatchError(err) {
		o.mapper.Reset() // a CRD may have arrived since discovery was cached
		mapping, err = o.mapper.RESTMapping(gk)
	}
	if meta.IsNoMatchError(err) {
		return nil, &kindNotServed{kind: gk, err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("stages for kind %s: %w", gk, err)
	}
	gvr := mapping.Resource
	k := &otherKind{
		kind:   gk.Kind,
		gvr:    gvr,
		writer: o.writer,
		client: o.dynamic.Resource(gvr),
		stageTraits: stage.Traits{
			Custom:   !scheme.Scheme.Recognizes(mapping.GroupVersionKind),
			NoStatus: !o.hasStatus(gvr),
		},
		version: o.version,
	}
	k.informer = dynamicinformer.NewFilteredDynamicInformer(o.dynamic, gvr, metav1.NamespaceAll, 0,
		cache.Indexers{}, nil).Informer()
	if err := k.informer.SetTransform(dropManagedFields); err != nil {
		return nil, err
	}
	k.runner = newRunner(k, lifecycle, o.recorder)
	k.runner.writer = o.writer
	if _, err := k.informer.AddEventHandler(k.runner.handler(nil, nil)); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(o.ctx)
	k.cancel = cancel
	o.wg.Add(2)
	go func() { defer o.wg.Done(); k.informer.Run(ctx.Done()) }()
	go func() {
		defer o.wg.Done()
		if cache.WaitForCacheSync(ctx.Done(), k.informer.HasSynced) {
			k.runner.run(ctx, 4)
		}
		k.runner.queue.ShutDown()
	}()
	klog.InfoS("following kind for its stages", "kind", gk, "resource", gvr)
	return k, nil
}

// hasStatus reports whether the resource has a status subresource.
func (o *otherKinds) hasStatus(gvr schema.GroupVersionResource) bool {
	list, err := o.discovery.ServerResourcesForGroupVersion(gvr.GroupVersion().String())
	if err != nil {
		return true // the usual case; a failed patch will say so
	}
	return slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool {
		return r.Name == gvr.Resource+"/status"
	})
}

// wait returns once every kind's runner has stopped.
func (o *otherKinds) wait() { o.wg.Wait() }

// otherKind is how the stage runner reads and changes objects of a kind
// it knows only through the dynamic client.
type otherKind struct {
	kind        string
	gvr         schema.GroupVersionResource
	writer      *objectWriter
	client      dynamic.NamespaceableResourceInterface
	stageTraits stage.Traits
	version     func() string
	informer    cache.SharedIndexInformer
	runner      *runner
	cancel      context.CancelFunc
}

func (k *otherKind) name() string { return k.kind }

func (k *otherKind) get(key string) (runtime.Object, bool) {
	obj, ok, err := k.informer.GetIndexer().GetByKey(key)
	if err != nil || !ok {
		return nil, false
	}
	u, ok := obj.(*unstructured.Unstructured)
	return u, ok
}

// managed: every object of the kind; a stage for it is the user's ask.
func (k *otherKind) managed(runtime.Object) bool { return true }

func (k *otherKind) keys() []string { return k.informer.GetIndexer().ListKeys() }

func (k *otherKind) funcs(runtime.Object) template.FuncMap {
	return template.FuncMap{"Version": k.version}
}

func (k *otherKind) traits() stage.Traits { return k.stageTraits }

func (k *otherKind) patch(ctx context.Context, obj runtime.Object, p stage.Patch) (runtime.Object, error) {
	u := obj.(*unstructured.Unstructured)
	client := k.client
	if p.As != "" {
		c, err := k.writer.client(p.As)
		if err != nil {
			return nil, err
		}
		client = c.Resource(k.gvr)
	}
	return client.Namespace(u.GetNamespace()).Patch(ctx, u.GetName(), p.Type, p.Data,
		metav1.PatchOptions{}, p.Subresources()...)
}

func (k *otherKind) remove(ctx context.Context, obj runtime.Object) error {
	u := obj.(*unstructured.Unstructured)
	err := k.client.Namespace(u.GetNamespace()).Delete(ctx, u.GetName(), metav1.DeleteOptions{
		Preconditions: metav1.NewUIDPreconditions(string(u.GetUID())),
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// kindNotServed is a kind stages name that the API server does not serve:
// no CRD defines it, or not yet.
type kindNotServed struct {
	kind schema.GroupKind
	err  error
}

func (e *kindNotServed) Error() string {
	return fmt.Sprintf("stages for kind %s: the API server serves no such kind (%v)", e.kind, e.err)
}

func (e *kindNotServed) Unwrap() error { return e.err }

// kindsNotServed are the kinds err (from update) says are not served, each
// with its error.
func kindsNotServed(err error) map[schema.GroupKind]error {
	errs := []error{err}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		errs = joined.Unwrap()
	}
	out := map[schema.GroupKind]error{}
	for _, e := range errs {
		var ns *kindNotServed
		if errors.As(e, &ns) {
			out[ns.kind] = ns
		}
	}
	return out
}
