package dpdb

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
)

// leadership is whether this replica leads: it does from the start
// without leader election, and with it from winning the Lease until it
// loses it (after which the process exits, so it never leads again). A
// nil leadership leads.
type leadership struct {
	once    sync.Once
	elected chan struct{} // closed on winning
	lost    atomic.Bool
}

func newLeadership() *leadership { return &leadership{elected: make(chan struct{})} }

func (l *leadership) win() { l.once.Do(func() { close(l.elected) }) }

// won is closed once this replica has won (at once for a nil leadership).
func (l *leadership) won() <-chan struct{} {
	if l == nil {
		return closedChan
	}
	return l.elected
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (l *leadership) leading() bool {
	if l == nil {
		return true
	}
	select {
	case <-l.elected:
		return !l.lost.Load()
	default:
		return false
	}
}

// notLeader is a non-leader's refusal of an eviction. The API server
// sends it to whoever evicts, as a 429 they retry; by then the Service
// routes to the leader, the only ready replica.
func notLeader(identity string) string {
	return fmt.Sprintf("this DistributedPodDisruptionBudget controller replica (%s) is not the leader, "+
		"which alone admits evictions; try again", identity)
}

// leaderIdentity is this replica's name in the Lease: its host name (a
// pod's name) and a random suffix, as two processes may share a host.
func leaderIdentity() string {
	host, err := os.Hostname()
	if err != nil {
		host = "dpdb-controller"
	}
	return host + "_" + string(uuid.NewUUID())
}

// elect campaigns for the Lease until ctx ends, running lead while this
// replica leads. It returns an error if leadership is lost before ctx
// ends: the caller exits, so that it stops serving at once (the API
// server's kept-alive connections to its webhook included) and rejoins
// as a candidate after its restart.
func (c *Controller) elect(ctx context.Context, lead func(context.Context)) error {
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: c.opts.leaseNamespace(), Name: c.opts.LeaderElectionName},
		Client:     c.client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: c.opts.LeaderElectionIdentity},
	}
	// The election outlives ctx until lead has returned, so that the Lease
	// is released (ReleaseOnCancel) only when nothing it guards runs.
	electCtx, cancelElect := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelElect()
	led := make(chan struct{}) // closed when lead returns
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:          lock,
		Name:          c.opts.LeaderElectionName,
		LeaseDuration: c.opts.LeaseDuration,
		RenewDeadline: c.opts.RenewDeadline,
		RetryPeriod:   c.opts.RetryPeriod,
		// A replica stopped by its pod's deletion hands over at once
		// rather than after the lease duration.
		ReleaseOnCancel: true,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(lctx context.Context) {
				defer close(led)
				leadCtx, stop := context.WithCancel(lctx)
				defer stop()
				defer context.AfterFunc(ctx, stop)()
				klog.InfoS("leading", "lease", lock.Describe(), "identity", lock.Identity())
				c.leader.win()
				lead(leadCtx)
			},
			OnStoppedLeading: func() { c.leader.lost.Store(true) },
			OnNewLeader: func(identity string) {
				klog.InfoS("the leader", "lease", lock.Describe(), "identity", identity)
			},
		},
	})
	if err != nil {
		return err
	}
	klog.InfoS("campaigning for leader", "lease", lock.Describe(), "identity", lock.Identity())
	go func() {
		<-ctx.Done()
		select {
		case <-c.leader.elected:
			<-led
		default:
		}
		cancelElect()
	}()
	le.Run(electCtx)
	select {
	case <-c.leader.elected:
		<-led
	default:
	}
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("lost the leader election (Lease %s): exiting", lock.Describe())
}
