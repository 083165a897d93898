package dpdb

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
)

// replica is one controller of two sharing a cluster, running until stop.
type replica struct {
	c    *Controller
	stop context.CancelFunc
	done chan error
}

// startReplica runs a controller with leader election over the fake
// federation's clients, with short lease timings.
func (f *fakeFederation) startReplica(identity string) *replica {
	f.t.Helper()
	opts := f.c.opts
	opts.LeaderElect, opts.LeaderElectionName, opts.LeaderElectionIdentity = true, DefaultLeaderElectionName, identity
	opts.LeaseDuration, opts.RenewDeadline, opts.RetryPeriod = time.Second, 500*time.Millisecond, 100*time.Millisecond
	if err := opts.Validate(); err != nil {
		f.t.Fatal(err)
	}
	c, err := newController(opts, Clients{Kube: f.local, Dynamic: f.dyn, Member: f.memberClient}, f.clock.Now)
	if err != nil {
		f.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(f.ctx)
	r := &replica{c: c, stop: cancel, done: make(chan error, 1)}
	go func() { r.done <- c.Run(ctx) }()
	f.t.Cleanup(func() { cancel(); <-r.done })
	return r
}

// Two replicas elect one leader through the Lease: racing for the same
// eviction, the leader admits it and the other refuses as no leader;
// when the leader stops, the other takes over within the lease time.
func TestLeaderElectionOneAdmits(t *testing.T) {
	f := admissionFixture(t, 4, redCounted()) // 6 healthy, 4 required
	f.waitReached("red")
	a, b := f.startReplica("a"), f.startReplica("b")
	f.waitFor("one replica leads", func() bool { return a.c.leader.leading() || b.c.leader.leading() })
	leader, other := a, b
	if b.c.leader.leading() {
		leader, other = b, a
	}
	if other.c.leader.leading() {
		t.Fatal("both replicas lead")
	}
	f.waitFor("the other replica caught up", func() bool {
		select {
		case <-other.c.caughtUp:
			return true
		default:
			return false
		}
	})

	// Both asked at once for the same eviction, as two API servers might.
	resps := make([]*admissionv1.AdmissionResponse, 2)
	var wg sync.WaitGroup
	for i, r := range []*replica{leader, other} {
		wg.Go(func() { resps[i] = review(f.ctx, t, r.c.webhook, evictionOf("web-0")) })
	}
	wg.Wait()
	if !resps[0].Allowed {
		t.Errorf("the leader refused: %+v", resps[0].Result)
	}
	want := notLeader(other.c.webhook.opts.LeaderElectionIdentity)
	if resps[1].Allowed || resps[1].Result == nil || resps[1].Result.Message != want {
		t.Errorf("the other replica answered %+v (%+v), want refused: %q", resps[1], resps[1].Result, want)
	}
	if !strings.Contains(want, "is not the leader") {
		t.Errorf("refusal %q does not say why", want)
	}

	// The leader stops (its Lease released, or, had it died, expired):
	// the other leads within the lease duration and admits.
	stopped := time.Now()
	leader.stop()
	if err := <-leader.done; err != nil {
		t.Errorf("the stopped leader's Run: %v", err)
	}
	leader.done <- nil // for the cleanup
	f.waitFor("the other replica leads", other.c.leader.leading)
	if took := time.Since(stopped); took > other.c.opts.LeaseDuration+2*other.c.opts.RetryPeriod {
		t.Errorf("took over after %s, more than the lease duration", took)
	}
	dry := evictionOf("web-0")
	dry.DryRun = new(true)
	if resp := review(f.ctx, t, other.c.webhook, dry); !resp.Allowed {
		t.Errorf("the new leader refused: %+v", resp.Result)
	}
	if resp := review(f.ctx, t, leader.c.webhook, dry); resp.Allowed {
		t.Error("the stopped leader still admits")
	}
}

// A replica that cannot renew its Lease stops leading and returns an
// error, so that its process exits and stops serving.
func TestLeaderElectionLost(t *testing.T) {
	f := admissionFixture(t, 4, redCounted())
	// Its renewals fail once cut, as when it is cut off from the API
	// server (the fake would let a stale renewal overwrite another
	// holder). Reactors are set before the clientset is in use.
	var cut atomic.Bool
	f.local.PrependReactor("update", "leases", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if action.(clienttesting.UpdateAction).GetObject().(metav1.Object).GetName() != DefaultLeaderElectionName || !cut.Load() {
			return false, nil, nil
		}
		return true, nil, errors.New("cut off")
	})
	a := f.startReplica("a")
	f.waitFor("a leads", a.c.leader.leading)
	cut.Store(true)
	select {
	case err := <-a.done:
		if err == nil || !strings.Contains(err.Error(), "lost the leader election") {
			t.Errorf("Run after losing the Lease: %v, want lost", err)
		}
		a.done <- nil
	case <-time.After(5 * time.Second):
		t.Fatal("Run still running after losing the Lease")
	}
	if a.c.leader.leading() {
		t.Error("still leading after losing the Lease")
	}
}
