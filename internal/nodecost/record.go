package nodecost

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	karpenterv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// Record keeps the ledger at path for the cluster client reaches: an Up
// for each node of a NodePool that appears, a Down for each that goes,
// until ctx is done. It runs in the autoscaler's process, which is on the
// cluster's clock, so time.Now here is the cluster's time. It returns an
// error only when the ledger cannot be read or written: the caller exits
// on it, and the restart picks up where the ledger left off.
func Record(ctx context.Context, client kubernetes.Interface, path string) error {
	started := time.Now()
	entries, err := ReadLedger(path)
	if err != nil {
		return err
	}
	l, err := openLedger(path)
	if err != nil {
		return err
	}
	defer l.Close()
	r := &recorder{ledger: l, open: map[types.UID]Entry{}, failed: make(chan error, 1)}
	_, byUID := lives(entries)
	for uid, life := range byUID {
		if life.down == nil {
			r.open[uid] = life.up
		}
	}

	// Only the nodes NodePools made: a cluster's static nodes may be
	// thousands, and cost nothing here.
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = karpenterv1.NodePoolLabelKey
	}))
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel() // Shutdown waits for the informer, which stops with ctx
		factory.Shutdown()
	}()
	nodes := factory.Core().V1().Nodes().Informer()
	if _, err := nodes.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    r.seen,
		UpdateFunc: func(_, obj any) { r.seen(obj) },
		DeleteFunc: r.gone,
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), nodes.HasSynced) {
		return nil // ctx done
	}
	// Nodes that went while no recorder ran (this process was down) left no
	// time behind: they are closed at this start, which is when their going
	// was first seen. Those that came meanwhile were opened by the initial
	// list, at their own creationTimestamp.
	present := map[types.UID]bool{}
	for _, obj := range nodes.GetStore().List() {
		present[obj.(*corev1.Node).UID] = true
	}
	r.closeMissing(present, started)

	select {
	case <-ctx.Done():
		return nil
	case err := <-r.failed:
		return err
	}
}

// recorder turns node events into ledger entries, once per node.
type recorder struct {
	mu     sync.Mutex
	ledger *ledger
	open   map[types.UID]Entry // the Up of each node there, by UID
	failed chan error          // the first write that failed
}

// seen opens a node not yet in the ledger (its Up at creationTimestamp).
func (r *recorder) seen(obj any) {
	node, ok := obj.(*corev1.Node)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.open[node.UID]; ok {
		return // every status update of every node comes here
	}
	n := Of(node)
	if n.NodePool == "" {
		return
	}
	up := Entry{Event: Up, At: node.CreationTimestamp.Time, Node: n.Name, UID: node.UID, NodePool: n.NodePool,
		InstanceType: n.InstanceType, CapacityType: n.CapacityType, PricePerHour: n.PricePerHour}
	if r.write(up) {
		r.open[node.UID] = up
	}
}

// gone closes a node when it is gone: a cloud bills an instance until it
// is terminated, and Karpenter deletes the Node only once it has drained
// it and terminated the instance (the deletionTimestamp is when that
// began).
func (r *recorder) gone(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	node, ok := obj.(*corev1.Node)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.close(node.UID, time.Now(), "")
}

// closeMissing closes every open node not present, at `at`.
func (r *recorder) closeMissing(present map[types.UID]bool, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for uid := range r.open {
		if !present[uid] {
			r.close(uid, at, "gone while the recorder was down: closed at its next start")
		}
	}
}

// close writes a node's Down, if it is open; r.mu is held.
func (r *recorder) close(uid types.UID, at time.Time, note string) {
	up, ok := r.open[uid]
	if !ok {
		return
	}
	if r.write(Entry{Event: Down, At: at, Node: up.Node, UID: uid, NodePool: up.NodePool, Note: note}) {
		delete(r.open, uid)
	}
}

// write appends e, reporting a failure to Record (the first one).
func (r *recorder) write(e Entry) bool {
	if err := r.ledger.append(e); err != nil {
		select {
		case r.failed <- err:
		default:
		}
		return false
	}
	return true
}
