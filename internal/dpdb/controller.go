package dpdb

import (
	"context"
	"errors"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	policylisters "k8s.io/client-go/listers/policy/v1"
	"k8s.io/client-go/tools/cache"
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
	dpdbs   cache.SharedIndexInformer // typed DPDBs: see typedDPDB
	pdbs    policylisters.PodDisruptionBudgetLister
	synced  []cache.InformerSynced
	queue   workqueue.TypedRateLimitingInterface[string]
	remotes *remotes
	webhook *webhook
	now     func() time.Time
	start   func(stop <-chan struct{})
	// caughtUp is closed once the caches have synced and remote clusters
	// are known: the webhook, serving from the start, decides only then.
	caughtUp chan struct{}
	// leader is whether this replica leads (see Options.LeaderElect).
	leader *leadership
}

// Run runs the controller against the cluster opts.Kubeconfig reaches
// until ctx ends.
func Run(ctx context.Context, opts Options) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	clients, err := ClientsFor(opts.Kubeconfig)
	if err != nil {
		return err
	}
	c, err := New(opts, clients)
	if err != nil {
		return err
	}
	return c.Run(ctx)
}

// New builds a controller, and its webhook, over clients; opts are as
// Validate accepts them.
func New(opts Options, clients Clients) (*Controller, error) {
	return newController(opts, clients, time.Now)
}

func newController(opts Options, clients Clients, now func() time.Time) (*Controller, error) {
	if opts.LeaderElect && opts.LeaderElectionIdentity == "" {
		opts.LeaderElectionIdentity = leaderIdentity()
	}
	c := &Controller{
		leader:   newLeadership(),
		opts:     opts,
		client:   clients.Kube,
		dyn:      clients.Dynamic,
		now:      now,
		caughtUp: make(chan struct{}),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](100*time.Millisecond, 10*time.Second),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "dpdb"}),
	}
	dynFactory := dynamicinformer.NewDynamicSharedInformerFactory(clients.Dynamic, resync)
	c.dpdbs = dynFactory.ForResource(policyv1alpha1.Resource).Informer()
	if err := c.dpdbs.SetTransform(typedDPDB); err != nil {
		return nil, err
	}
	if err := c.dpdbs.AddIndexers(cache.Indexers{
		memberIndex:  indexMembers(opts.ClusterName, member.indexKey),
		clusterIndex: indexMembers(opts.ClusterName, func(m member) string { return m.Cluster }),
	}); err != nil {
		return nil, err
	}
	_, _ = c.dpdbs.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj any) { c.enqueue(obj) },
	})
	factory := informers.NewSharedInformerFactory(clients.Kube, 0)
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
		opts: opts, local: clients.Kube, newClient: clients.Member, now: c.now, clusters: map[string]*remote{},
		onChange: func(m member) { c.enqueueIndexed(memberIndex, m.indexKey()) },
		onReach:  func(cluster string) { c.enqueueIndexed(clusterIndex, cluster) },
	}
	c.webhook = &webhook{opts: opts, client: clients.Kube, dpdbs: c.dpdbs.GetIndexer(), members: c.remotes,
		caughtUp: c.caughtUp, leader: c.leader}
	if !opts.LeaderElect {
		c.leader.win()
	}
	return c, nil
}

// Run syncs DPDBs until ctx ends; with leader election, only while it
// leads, and it returns an error if it stops leading before ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer utilruntime.HandleCrash()
	defer c.queue.ShutDown()
	// A webhook that cannot serve stops the controller, with its error;
	// the webhook stops when Run returns.
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	klog.InfoS("dpdb controller starting", "cluster", c.opts.ClusterName)
	// The webhook listens at once, so a new cluster need not wait for the
	// caches (a just-made CRD's first list takes the API server about a
	// second); it refuses evictions until caughtUp rather than guess.
	if c.opts.WebhookPort != 0 {
		go func() {
			if err := c.webhook.serve(ctx); err != nil {
				stop(err)
			}
		}()
	}
	defer c.remotes.stop()
	// A candidate catches up too, reading only, so it takes over at once.
	if err := c.catchUp(ctx); err != nil {
		return c.failed(ctx, err)
	}
	go wait.UntilWithContext(ctx, c.remotes.refresh, 10*time.Second)
	lead := func(ctx context.Context) {
		var wg sync.WaitGroup
		for range c.opts.Workers {
			wg.Go(func() { wait.UntilWithContext(ctx, c.work, time.Second) })
		}
		klog.InfoS("dpdb controller started")
		<-ctx.Done()
		c.queue.ShutDown()
		wg.Wait()
	}
	if !c.opts.LeaderElect {
		lead(ctx)
		return c.failed(ctx, nil)
	}
	return c.failed(ctx, c.elect(ctx, lead))
}

// failed is Run's error: the webhook's, if it could not serve, else err.
func (c *Controller) failed(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) && !errors.Is(cause, context.DeadlineExceeded) {
		return cause
	}
	return err
}

// catchUp starts the informers and the remote watches, and returns once
// the caches have synced and the remote clusters are known; the webhook
// decides from then on.
func (c *Controller) catchUp(ctx context.Context) error {
	if err := c.waitForAPI(ctx); err != nil {
		return err
	}
	c.start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return ctx.Err()
	}
	c.remotes.refresh(ctx) // remote clusters known before the first decision
	close(c.caughtUp)
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
