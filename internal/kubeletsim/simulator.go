// Package kubeletsim simulates the kubelets of a cluster's nodes: nodes
// register and stay alive, pods bound to them get addresses and run, Job
// pods complete, deleted pods go — each step a Stage (internal/stage).
package kubeletsim

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/kubesim/kubesim/apis/kwok/v1alpha1"
	"github.com/kubesim/kubesim/internal/stage"
)

// Simulator is a running kubelet simulator.
type Simulator struct {
	opts        Options
	config      *rest.Config
	client      kubernetes.Interface
	nodeFilter  func(*corev1.Node) bool
	nodeLister  corelisters.NodeLister
	podLister   corelisters.PodLister
	podsByNode  cache.Indexer
	leases      *leases
	members     *members
	nodeRunner  *runner
	podRunner   *runner
	nodeIPs     *ipPool
	fallbackIPs *ipPool // nil: pods wait for their node's podCIDR
	recorder    record.EventRecorder
	claims      *claimGate // nil: the cluster's claims cannot be read
	release     release    // the kubelet version of the nodes made Ready

	mu           sync.Mutex
	podPools     *nodePools
	checkedCIDRs map[string]string // node name → the podCIDR checkPodCIDR saw
}

const podsByNodeIndex = "node"

// podWorkers bring pods along their stages in parallel: as many as a
// clone creates pods at once (clone.Workers), so that its pods go Running
// as fast as they come. A pod's step is a status write, which waits on
// etcd far longer than on CPU.
const podWorkers = 64

// leaseWorkers renew Leases in parallel: 10,000 nodes renewing every 100 s
// are 100 writes a second, which at a busy API server's 0.2-0.5 s a write
// needs 20-50 of them in flight.
const leaseWorkers = 64

// Run simulates until ctx ends.
func Run(ctx context.Context, opts Options) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	if opts.Config == nil {
		cfg, err := clientcmd.BuildConfigFromFlags("", opts.Kubeconfig)
		if err != nil {
			return fmt.Errorf("--kubeconfig: %w", err)
		}
		opts.Config = cfg
	}
	s, err := newSimulator(opts)
	if err != nil {
		return err
	}
	return s.run(ctx)
}

func newSimulator(opts Options) (*Simulator, error) {
	filter, err := nodeFilter(opts)
	if err != nil {
		return nil, err
	}
	nodeIPs, err := newIPPool(opts.NodeIPRange)
	if err != nil {
		return nil, fmt.Errorf("node IP range: %w", err)
	}
	var fallbackIPs *ipPool
	if opts.PodIPRange != "" {
		if fallbackIPs, err = newIPPool(opts.PodIPRange); err != nil {
			return nil, fmt.Errorf("pod IP range: %w", err)
		}
	}
	cfg := rest.CopyConfig(opts.Config)
	// Protobuf is far cheaper than JSON for the API server to encode, and
	// the simulator's load must not be the bottleneck: no client throttle.
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.QPS, cfg.Burst = 100000, 100000
	cfg.UserAgent = "kubesim-kubelet-sim"
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Simulator{
		opts:         opts,
		config:       cfg,
		client:       client,
		nodeFilter:   filter,
		nodeIPs:      nodeIPs,
		fallbackIPs:  fallbackIPs,
		podPools:     newNodePools(),
		checkedCIDRs: map[string]string{},
	}, nil
}

func (s *Simulator) run(ctx context.Context) error {
	builtin, err := stage.Builtin(s.opts.StageSet)
	if err != nil {
		return fmt.Errorf("--stages: %w", err)
	}
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: s.client.CoreV1().Events("")})
	defer broadcaster.Shutdown()
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kubelet-sim"})
	s.recorder = recorder
	s.release.discovery = s.client.Discovery()

	nodeFactory := informers.NewSharedInformerFactory(s.client, 0)
	podFactory := informers.NewSharedInformerFactoryWithOptions(s.client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermNotEqualSelector("spec.nodeName", "").String()
		}))
	nodeInformer := nodeFactory.Core().V1().Nodes()
	podInformer := podFactory.Core().V1().Pods()
	for _, inf := range []cache.SharedIndexInformer{nodeInformer.Informer(), podInformer.Informer()} {
		// Nobody here reads managedFields; not caching them saves memory.
		if err := inf.SetTransform(dropManagedFields); err != nil {
			return err
		}
	}
	if err := podInformer.Informer().AddIndexers(cache.Indexers{podsByNodeIndex: podNodeName}); err != nil {
		return err
	}
	s.nodeLister, s.podLister = nodeInformer.Lister(), podInformer.Lister()
	s.podsByNode = podInformer.Informer().GetIndexer()

	s.nodeRunner = newRunner(&nodeKind{s}, stage.NewLifecycle("", "Node", builtin), recorder)
	s.podRunner = newRunner(&podKind{s}, stage.NewLifecycle("", "Pod", builtin), recorder)
	if s.claims = newClaimGate(ctx, s.client); s.claims != nil {
		if err := s.claims.start(ctx, s.podRunner.queue.Add); err != nil {
			return err
		}
	}
	others, stages, err := s.userStages(ctx, builtin, recorder)
	if err != nil {
		return err
	}
	s.leases = newLeases(s.client.CoordinationV1(), s.opts.Holder, s.opts.LeaseDuration, s.opts.LeaseRenewInterval, s.nodeAcquired)
	members := newMembers(s.client, s.opts.Holder, s.opts.LeaseDuration, s.leases.reassign)
	s.leases.members, s.members = members, members

	if _, err := nodeInformer.Informer().AddEventHandler(s.nodeHandler()); err != nil {
		return err
	}
	if _, err := podInformer.Informer().AddEventHandler(s.podRunner.handler(s.podAdded, s.podDeleted)); err != nil {
		return err
	}
	nodeFactory.Start(ctx.Done())
	podFactory.Start(ctx.Done())
	for _, synced := range []cache.InformerSynced{nodeInformer.Informer().HasSynced, podInformer.Informer().HasSynced} {
		if !cache.WaitForCacheSync(ctx.Done(), synced) {
			return ctx.Err()
		}
	}
	// Addresses already handed out (before a restart) stay taken.
	s.occupyAddresses()
	if stages != nil {
		if !cache.WaitForCacheSync(ctx.Done(), stages.informer.HasSynced) {
			return ctx.Err()
		}
		// The user's stages rule from the start, not after a first pass.
		if err := stages.apply(stages.stages()); err != nil {
			klog.ErrorS(err, "applying stages; retrying")
		}
	}
	// Nodes are shared from the start: no Lease is taken before the other
	// simulators are known.
	if err := members.start(ctx); err != nil {
		return err
	}
	klog.InfoS("kubelet simulator started", "holder", s.opts.Holder, "manageAllNodes", s.opts.ManageAllNodes,
		"announcement", memberLeaseName(s.opts.Holder))

	var wg sync.WaitGroup
	runs := []func(){
		func() { s.leases.run(ctx, leaseWorkers) },
		func() { members.run(ctx) },
		func() { s.nodeRunner.run(ctx, 16) },
		func() { s.podRunner.run(ctx, podWorkers) },
	}
	if stages != nil {
		runs = append(runs, func() { stages.run(ctx) })
	}
	for _, run := range runs {
		wg.Add(1)
		go func() { defer wg.Done(); run() }()
	}
	wg.Wait()
	others.wait()
	nodeFactory.Shutdown()
	podFactory.Shutdown()
	return nil
}

// userStages sets up the following of the cluster's Stage objects (if it
// has the Stage CRD) and of the other kinds they name. The returned watcher
// is nil without the CRD: then only the built-in stages apply until it is
// served (followStagesLater). A server that cannot be asked yet (started
// in an outage) is asked again until it answers: a simulator that gave up
// would ignore the user's Stages for good.
func (s *Simulator) userStages(ctx context.Context, builtin []*stage.Stage, recorder record.EventRecorder) (*otherKinds, *stageWatcher, error) {
	dyn, err := dynamic.NewForConfig(s.config)
	if err != nil {
		return nil, nil, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(s.config)
	if err != nil {
		return nil, nil, err
	}
	cached := memory.NewMemCacheClient(disc)
	others := newOtherKinds(ctx, s.config, dyn, cached, recorder, s.kubeletVersion)
	s.nodeRunner.writer, s.podRunner.writer = others.writer, others.writer
	follow := func() (*stageWatcher, error) {
		factory := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
		watcher, err := newStageWatcher(factory, builtin, recorder, func(all []*stage.Stage) error {
			s.nodeRunner.setLifecycle(stage.NewLifecycle("", "Node", all))
			s.podRunner.setLifecycle(stage.NewLifecycle("", "Pod", all))
			return others.update(all)
		})
		if err != nil {
			return nil, err
		}
		watcher.status = dyn.Resource(v1alpha1.StagesResource)
		factory.Start(ctx.Done())
		return watcher, nil
	}
	err = waitAnswered(ctx, func() error { cached.Invalidate(); return servesStages(cached) })
	if ctx.Err() != nil {
		return nil, nil, ctx.Err()
	}
	if err != nil {
		klog.InfoS("the cluster has no Stage CRD: only built-in stages apply until it has", "set", s.opts.StageSet, "err", err)
		go s.followStagesLater(ctx, cached, follow)
		return others, nil, nil
	}
	watcher, err := follow()
	return others, watcher, err
}

// waitAnswered calls ask until it succeeds or the server says no (not
// found, forbidden: not a server that cannot answer yet, or is starting),
// and returns that; it backs off up to askAgainCap.
func waitAnswered(ctx context.Context, ask func() error) error {
	delay := 100 * time.Millisecond
	for {
		err := ask()
		if err == nil || apierrors.IsNotFound(err) || apierrors.IsForbidden(err) || ctx.Err() != nil {
			return err
		}
		klog.InfoS("the API server does not answer yet; asking again", "err", err, "in", delay)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, askAgainCap)
	}
}

// askAgainCap is the longest wait between two looks for the Stage CRD.
const askAgainCap = 5 * time.Second

// followStagesLater follows the cluster's Stages once it serves them (its
// CRD applied after the simulator started).
func (s *Simulator) followStagesLater(ctx context.Context, cached discovery.CachedDiscoveryInterface, follow func() (*stageWatcher, error)) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(askAgainCap):
		}
		cached.Invalidate()
		if servesStages(cached) == nil {
			break
		}
	}
	watcher, err := follow()
	if err != nil {
		klog.ErrorS(err, "following the cluster's Stages")
		return
	}
	if !cache.WaitForCacheSync(ctx.Done(), watcher.informer.HasSynced) {
		return
	}
	klog.InfoS("the cluster serves Stages now: its own apply")
	if err := watcher.apply(watcher.stages()); err != nil {
		klog.ErrorS(err, "applying stages; retrying")
	}
	watcher.run(ctx)
}

func dropManagedFields(obj any) (any, error) {
	if accessor, err := meta.Accessor(obj); err == nil {
		accessor.SetManagedFields(nil)
	}
	return obj, nil
}

func podNodeName(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Spec.NodeName == "" {
		return nil, nil
	}
	return []string{pod.Spec.NodeName}, nil
}

// nodeHandler follows nodes: a candidate gets its Lease taken; one that is
// no longer a candidate, or deleted, is let go.
func (s *Simulator) nodeHandler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: s.nodeChanged,
		UpdateFunc: func(old, obj any) {
			s.nodeChanged(obj)
			s.podCIDRArrived(old, obj)
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			node, ok := obj.(*corev1.Node)
			if !ok {
				return
			}
			s.leases.drop(node.Name)
			s.nodeRunner.forget(node.Name)
			s.nodeIPs.Release(node.Name)
			s.podPools.forget(node.Name)
			s.mu.Lock()
			delete(s.checkedCIDRs, node.Name)
			s.mu.Unlock()
		},
	}
}

func (s *Simulator) nodeChanged(obj any) {
	node, ok := obj.(*corev1.Node)
	if !ok {
		return
	}
	if !s.nodeFilter(node) {
		s.leases.drop(node.Name)
		return
	}
	// Another simulator's addresses too: no node gets one twice.
	if ip := internalIP(node); ip != nil {
		s.nodeIPs.Occupy(node.Name, ip)
	}
	s.leases.want(node)
	s.checkPodCIDR(node)
	// Started again, its Lease is renewed at once and, held again, the node
	// and its pods get their turn (nodeAcquired).
	s.leases.setStopped(node.Name, Stopped(node))
	s.nodeRunner.enqueue(node)
}

// podCIDRArrived gives the pods of a node that has just got its podCIDR
// their turn at once: they were waiting for it.
func (s *Simulator) podCIDRArrived(old, obj any) {
	before, ok1 := old.(*corev1.Node)
	node, ok2 := obj.(*corev1.Node)
	if !ok1 || !ok2 || before.Spec.PodCIDR != "" || node.Spec.PodCIDR == "" || !s.nodeFilter(node) {
		return
	}
	pods, _ := s.podsByNode.ByIndex(podsByNodeIndex, node.Name)
	for _, pod := range pods {
		s.podRunner.enqueue(pod)
	}
}

// nodeAcquired runs when this simulator takes a node's Lease (or a node it
// still held is assigned to it again): the node and every pod already
// bound to it get their turn, the addresses another simulator gave its
// pods taken first.
func (s *Simulator) nodeAcquired(name string) {
	node, err := s.nodeLister.Get(name)
	if err == nil {
		s.nodeRunner.enqueue(node)
	}
	pods, _ := s.podsByNode.ByIndex(podsByNodeIndex, name)
	if node != nil {
		s.occupyPodAddresses(node, pods)
	}
	for _, pod := range pods {
		s.podRunner.enqueue(pod)
	}
}

// manages reports whether this simulator acts for the named node.
func (s *Simulator) manages(nodeName string) bool {
	node, err := s.nodeLister.Get(nodeName)
	return err == nil && s.managesNode(node)
}

// managesNode reports whether this simulator acts for node: it is a
// candidate, its Lease is ours, and it is not stopped. A stopped node's
// kubelet is as good as dead: nothing of it or its pods changes.
func (s *Simulator) managesNode(node *corev1.Node) bool {
	return s.nodeFilter(node) && !Stopped(node) && s.leases.holds(node.Name)
}
