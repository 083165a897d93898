package dpdb

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	policylisters "k8s.io/client-go/listers/policy/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	policyv1alpha1 "github.com/kubesim/kubesim/apis/policy/v1alpha1"
)

// Indexes of the DPDB informer: by the members a DPDB federates, and by
// the clusters it federates.
const (
	memberIndex  = "member"
	clusterIndex = "cluster"
)

// resync refreshes every DPDB's status now and then, so the age of its
// members' observations stays true.
const resync = 30 * time.Second

// Controller keeps each DPDB's child PDB and status.
type Controller struct {
	opts    Options
	client  kubernetes.Interface
	dyn     dynamic.Interface
	dpdbs   cache.SharedIndexInformer
	pdbs    policylisters.PodDisruptionBudgetLister
	synced  []cache.InformerSynced
	queue   workqueue.TypedRateLimitingInterface[string]
	remotes *remotes
	now     func() time.Time
	start   func(stop <-chan struct{})
	// caughtUp is closed once the caches have synced and remote clusters
	// are known: the webhook, serving from the start, decides only then.
	caughtUp chan struct{}
}

// Run runs the controller until ctx ends.
func Run(ctx context.Context, opts Options) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	cfg, err := restConfig(opts.Kubeconfig)
	if err != nil {
		return err
	}
	c, err := New(cfg, opts)
	if err != nil {
		return err
	}
	return c.Run(ctx)
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("--kubeconfig: not given, and not running in a cluster: %w", err)
		}
		return cfg, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig: %w", err)
	}
	return cfg, nil
}

// New builds a controller for the cluster cfg reaches.
func New(cfg *rest.Config, opts Options) (*Controller, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 200, 400
	client, err1 := kubernetes.NewForConfig(cfg)
	dyn, err2 := dynamic.NewForConfig(cfg)
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	c := &Controller{
		opts:     opts,
		client:   client,
		dyn:      dyn,
		now:      time.Now,
		caughtUp: make(chan struct{}),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](100*time.Millisecond, 10*time.Second),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "dpdb"}),
	}
	dynFactory := dynamicinformer.NewDynamicSharedInformerFactory(dyn, resync)
	c.dpdbs = dynFactory.ForResource(policyv1alpha1.Resource).Informer()
	if err := c.dpdbs.AddIndexers(cache.Indexers{memberIndex: c.memberKeys, clusterIndex: c.clusterKeys}); err != nil {
		return nil, err
	}
	_, _ = c.dpdbs.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj any) { c.enqueue(obj) },
	})
	factory := informers.NewSharedInformerFactory(client, 0)
	pdbInformer := factory.Policy().V1().PodDisruptionBudgets()
	c.pdbs = pdbInformer.Lister()
	_, _ = pdbInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.pdbChanged,
		UpdateFunc: func(_, obj any) { c.pdbChanged(obj) },
		DeleteFunc: c.pdbChanged,
	})
	c.synced = []cache.InformerSynced{c.dpdbs.HasSynced, pdbInformer.Informer().HasSynced}
	c.start = func(stop <-chan struct{}) { dynFactory.Start(stop); factory.Start(stop) }
	c.remotes = &remotes{
		opts: opts, local: client, now: c.now, clusters: map[string]*remote{},
		onChange: func(m member) { c.enqueueIndexed(memberIndex, m.indexKey()) },
		onReach:  func(cluster string) { c.enqueueIndexed(clusterIndex, cluster) },
	}
	return c, nil
}

// Run syncs DPDBs until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer utilruntime.HandleCrash()
	defer c.queue.ShutDown()
	klog.InfoS("dpdb controller starting", "cluster", c.opts.ClusterName)
	// The webhook listens at once, so a new cluster need not wait for the
	// caches (a just-made CRD's first list takes the API server about a
	// second); it refuses evictions until caughtUp rather than guess.
	served := make(chan error, 1)
	if c.opts.WebhookPort != 0 {
		go func() { served <- c.serveWebhook(ctx) }()
	}
	if err := c.waitForAPI(ctx); err != nil {
		return err
	}
	c.start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return ctx.Err()
	}
	defer c.remotes.stop()
	c.remotes.refresh(ctx) // remote clusters known before the first decision
	close(c.caughtUp)
	go wait.UntilWithContext(ctx, c.remotes.refresh, 10*time.Second)
	var wg sync.WaitGroup
	for range c.opts.Workers {
		wg.Go(func() { wait.UntilWithContext(ctx, c.work, time.Second) })
	}
	klog.InfoS("dpdb controller started")
	select {
	case err := <-served:
		if err != nil {
			c.queue.ShutDown()
			wg.Wait()
			return err
		}
	case <-ctx.Done():
	}
	<-ctx.Done()
	c.queue.ShutDown()
	wg.Wait()
	return nil
}

// waitForAPI waits until DPDBs can be listed. A new cluster starts this
// controller beside its API server, before the CRD and this controller's
// rights exist: asked often here, they are found within moments, where an
// informer's first failure would back off for most of a second.
func (c *Controller) waitForAPI(ctx context.Context) error {
	var logged time.Time
	return wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, err := c.dyn.Resource(policyv1alpha1.Resource).List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil && time.Since(logged) > 5*time.Second {
			// Said now and then: a missing CRD or right is the user's to fix.
			klog.InfoS("waiting to list DistributedPodDisruptionBudgets", "err", err)
			logged = time.Now()
		}
		return err == nil, nil
	})
}

func (c *Controller) work(ctx context.Context) {
	for {
		key, quit := c.queue.Get()
		if quit {
			return
		}
		err := c.sync(ctx, key)
		switch {
		case err == nil:
			c.queue.Forget(key)
		case apierrors.IsConflict(err):
			c.queue.AddRateLimited(key)
		default:
			klog.ErrorS(err, "syncing DPDB", "dpdb", key)
			c.queue.AddRateLimited(key)
		}
		c.queue.Done(key)
	}
}

func (c *Controller) enqueue(obj any) {
	if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		c.queue.Add(key)
	}
}

func (c *Controller) enqueueIndexed(index, value string) {
	objs, err := c.dpdbs.GetIndexer().ByIndex(index, value)
	if err != nil {
		return
	}
	for _, obj := range objs {
		c.enqueue(obj)
	}
}

// pdbChanged resyncs the DPDB whose child it may be and every DPDB that
// federates it.
func (c *Controller) pdbChanged(obj any) {
	pdb, ok := toPDB(obj)
	if !ok {
		return
	}
	c.queue.Add(pdb.Namespace + "/" + pdb.Name)
	c.enqueueIndexed(memberIndex, member{Namespace: pdb.Namespace, Name: pdb.Name}.indexKey())
}

// members resolves a DPDB's federation entries: a namespace defaults to
// the DPDB's, this cluster's name to "".
func (c *Controller) members(d *policyv1alpha1.DistributedPodDisruptionBudget) []member {
	var ms []member
	for _, f := range d.Spec.Federation {
		m := member{Cluster: f.Cluster, Namespace: f.Namespace, Name: f.Name}
		if m.Namespace == "" {
			m.Namespace = d.Namespace
		}
		if m.Cluster == c.opts.ClusterName {
			m.Cluster = ""
		}
		ms = append(ms, m)
	}
	return ms
}

func (c *Controller) memberKeys(obj any) ([]string, error) {
	d, err := toDPDB(obj)
	if err != nil {
		return nil, nil
	}
	var keys []string
	for _, m := range c.members(d) {
		keys = append(keys, m.indexKey())
	}
	return keys, nil
}

func (c *Controller) clusterKeys(obj any) ([]string, error) {
	d, err := toDPDB(obj)
	if err != nil {
		return nil, nil
	}
	var keys []string
	for _, m := range c.members(d) {
		if m.Cluster != "" {
			keys = append(keys, m.Cluster)
		}
	}
	return keys, nil
}

func toDPDB(obj any) (*policyv1alpha1.DistributedPodDisruptionBudget, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("not an unstructured object: %T", obj)
	}
	d := &policyv1alpha1.DistributedPodDisruptionBudget{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, d); err != nil {
		return nil, err
	}
	return d, nil
}

// memberView is one member as this sync observed it.
type memberView struct {
	member
	obs        Observation
	message    string
	observedAt time.Time
}

// observeMembers reads every member: this cluster's from the informer,
// others' through their watches. A member listed twice, or naming the
// DPDB's own child, is not counted (it would count pods twice).
func (c *Controller) observeMembers(d *policyv1alpha1.DistributedPodDisruptionBudget) []memberView {
	now := c.now()
	seen := map[member]bool{}
	var views []memberView
	for _, m := range c.members(d) {
		v := memberView{member: m}
		switch {
		case seen[m]:
			v.message = "listed twice in spec.federation; remove one"
		case m.Cluster == "" && m.Namespace == d.Namespace && m.Name == d.Name:
			v.message = "is this DPDB's own child PDB; remove it from spec.federation"
		case m.Cluster == "":
			v.obs, v.message = observeIn(c.pdbs, m, "")
			v.observedAt = now
		default:
			v.obs, v.message, v.observedAt = c.remotes.observe(m)
		}
		seen[m] = true
		views = append(views, v)
	}
	return views
}

// sync brings one DPDB's child PDB and status up to date.
func (c *Controller) sync(ctx context.Context, key string) error {
	obj, exists, err := c.dpdbs.GetIndexer().GetByKey(key)
	if err != nil || !exists {
		return err // the child goes with it: it is owned
	}
	d, err := toDPDB(obj)
	if err != nil {
		return err
	}
	if d.DeletionTimestamp != nil {
		return nil
	}
	views := c.observeMembers(d)
	obs := make([]Observation, len(views))
	for i, v := range views {
		obs[i] = v.obs
	}
	child, err := c.pdbs.PodDisruptionBudgets(d.Namespace).Get(d.Name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if err != nil {
		child = nil
	}
	st := status{dpdb: d, views: views}
	if child != nil && !metav1.IsControlledBy(child, d) {
		st.conflict = fmt.Sprintf("a PodDisruptionBudget %s/%s exists that this DPDB does not own; delete or rename it", d.Namespace, d.Name)
		return c.writeStatus(ctx, d, st.build(c.now()))
	}
	var own Observation
	if child != nil {
		own, _ = observe(child)
	}
	st.own = own
	st.budget, st.specErr = Compute(d.Spec, own, obs)
	if d.Spec.Selector == nil {
		st.specErr = errors.New("spec.selector: required; select this namespace's pods of the budget")
	} else if _, err := metav1.LabelSelectorAsSelector(d.Spec.Selector); err != nil {
		st.specErr = fmt.Errorf("spec.selector: %v", err)
	}
	if d.Spec.Selector != nil && (st.specErr == nil || child != nil) {
		// A bad spec with a child still closes the child.
		child, st.childChanged, err = c.ensureChild(ctx, d, child, st.budget.ChildMinAvailable)
		if err != nil {
			return err
		}
	}
	st.child = child
	if err := c.writeStatus(ctx, d, st.build(c.now())); err != nil {
		return err
	}
	if !st.budget.Sure {
		// Reach and staleness are time-bound: look again soon.
		c.queue.AddAfter(key, c.opts.ProbeInterval)
	}
	return nil
}

// ensureChild creates or corrects the child PDB. It reports whether it
// wrote: the child's status then waits for the disruption controller.
func (c *Controller) ensureChild(ctx context.Context, d *policyv1alpha1.DistributedPodDisruptionBudget, child *policyv1.PodDisruptionBudget, minAvailable int32) (*policyv1.PodDisruptionBudget, bool, error) {
	want := childSpec(d, minAvailable)
	pdbs := c.client.PolicyV1().PodDisruptionBudgets(d.Namespace)
	if child == nil {
		created, err := pdbs.Create(ctx, &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{
				Name: d.Name, Namespace: d.Namespace,
				Labels:          map[string]string{ChildLabel: d.Name},
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, policyv1alpha1.SchemeGroupVersion.WithKind(policyv1alpha1.Kind))},
			},
			Spec: want,
		}, metav1.CreateOptions{})
		return created, err == nil, err
	}
	if apiequality.Semantic.DeepEqual(child.Spec, want) {
		return child, false, nil
	}
	updated := child.DeepCopy()
	updated.Spec = want
	updated, err := pdbs.Update(ctx, updated, metav1.UpdateOptions{})
	if err == nil {
		klog.InfoS("child PDB updated", "pdb", d.Namespace+"/"+d.Name, "minAvailable", minAvailable)
	}
	return updated, err == nil, err
}

// ChildLabel marks a child PDB with the name of its DPDB.
const ChildLabel = "policy.kubesim.io/dpdb"

func childSpec(d *policyv1alpha1.DistributedPodDisruptionBudget, minAvailable int32) policyv1.PodDisruptionBudgetSpec {
	v := intstrFromInt32(minAvailable)
	return policyv1.PodDisruptionBudgetSpec{Selector: d.Spec.Selector.DeepCopy(), MinAvailable: &v}
}

// writeStatus writes the DPDB's status if it changed.
func (c *Controller) writeStatus(ctx context.Context, d *policyv1alpha1.DistributedPodDisruptionBudget, st policyv1alpha1.DistributedPodDisruptionBudgetStatus) error {
	if apiequality.Semantic.DeepEqual(d.Status, st) {
		return nil
	}
	updated := d.DeepCopy()
	updated.Status = st
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(updated)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetAPIVersion(policyv1alpha1.GroupVersion)
	u.SetKind(policyv1alpha1.Kind)
	_, err = c.dyn.Resource(policyv1alpha1.Resource).Namespace(d.Namespace).UpdateStatus(ctx, u, metav1.UpdateOptions{})
	return err
}

// describe names the unsure members, for conditions and refusals.
func describe(views []memberView) string {
	var parts []string
	for _, v := range views {
		if !v.obs.Sure {
			parts = append(parts, v.member.String()+": "+v.message)
		}
	}
	return strings.Join(parts, "; ")
}
