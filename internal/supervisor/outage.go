package supervisor

import (
	"context"
	"sync"
	"time"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterclock"
	"github.com/kubesim/kubesim/internal/component"
	"github.com/kubesim/kubesim/internal/controlplane"
	"github.com/kubesim/kubesim/internal/credentials"
)

// While the API server does not answer (frozen, starved, a laptop lid shut
// on it), no node can renew its Lease, yet the controller-manager's
// node-lifecycle controller keeps its own clock: after the grace period it
// declares every node dead, and its updates, queued in the server's
// sockets, land the moment the server answers — before the simulator's
// renewals — so every node flaps NotReady, and with short tolerations pods
// are evicted. Its verdict is about the outage, not the nodes. So the
// supervisor stops such components soon after the server falls silent
// (before any grace period can run out) and starts them afresh when it
// answers: a new node-lifecycle controller starts every node's grace
// period anew.

// outageGate records whether the API server answers.
type outageGate struct {
	mu sync.Mutex
	up chan struct{} // closed while the API server answers
}

func newOutageGate() *outageGate {
	up := make(chan struct{})
	close(up)
	return &outageGate{up: up}
}

// answering is closed while the API server answers.
func (g *outageGate) answering() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.up
}

// set records whether the server answers and reports whether that changed.
func (g *outageGate) set(answering bool) (changed bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.up:
		if !answering {
			g.up = make(chan struct{})
		}
		return !answering
	default:
		if answering {
			close(g.up)
		}
		return answering
	}
}

// The supervisor runs on real time, the components on the cluster's
// clock: every limit below is the cluster's, in real time. At 60x a
// 50s grace period is under a second, so the server is probed often
// enough, and given little enough time to answer, for the held
// components to stop well within it.

// silenceLimit is how long the API server may be silent before components
// HeldDuringOutages stop: a quarter of the node grace period. A node's
// Lease is renewed every half grace period (more often on a scaled
// clock), so the controller-manager cannot judge a node dead sooner than
// half a grace period into an outage.
func silenceLimit(grace time.Duration, clock *v1alpha1.Clock) time.Duration {
	return max(clusterclock.RealTime(grace/4, clock), minProbe)
}

// probeTimings are how often the API server is probed and how long each
// probe may take (one that times out is silence): a quarter and a half of
// the silence limit, at most twice a second and a second, and at least
// minProbe and twice that (a busy server's /readyz still answers in it).
func probeTimings(limit time.Duration) (every, timeout time.Duration) {
	return min(max(limit/4, minProbe), 500*time.Millisecond), min(max(limit/2, 2*minProbe), time.Second)
}

const minProbe = 50 * time.Millisecond

// watchAPIServer keeps s.outage up to date until ctx ends, stopping the
// held components when an outage begins; keepRunning starts them again
// once it ends.
func (s *supervisor) watchAPIServer(ctx context.Context) {
	// One client for every probe: certificates read and a connection made
	// once, not twice a second.
	client, err := credentials.AdminHTTPClient(s.dir)
	if err != nil {
		s.logger.Printf("not watching the API server for outages: %v", err)
		return
	}
	lastAnswer := time.Now()
	for {
		cfg := s.config()
		limit := silenceLimit(cfg.NodeLifecycle.NodeMonitorGracePeriod.Duration, cfg.Status.Clock)
		every, timeout := probeTimings(limit)
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
		probeCtx, cancel := context.WithTimeout(ctx, timeout)
		err := controlplane.ProbeReadyz(probeCtx, client, cfg)
		cancel()
		if err == nil {
			lastAnswer = time.Now()
			if s.outage.set(true) {
				s.logger.Printf("the API server answers again")
			}
			continue
		}
		silent := time.Since(lastAnswer)
		if silent < limit || !s.outage.set(false) {
			continue
		}
		s.logger.Printf("the API server has not answered for %s (%v)", silent.Round(time.Millisecond), err)
		for _, comp := range controlplane.Components() {
			if comp.HeldDuringOutages {
				s.askRestart(comp.Name, restartRequest{kill: true,
					reason: "the API server does not answer; it judges nodes by Leases nobody can renew now, so it waits for the server"})
			}
		}
	}
}

// waitForAPIServer returns once the API server answers (at once if it
// does), or false when ctx ends first.
func (s *supervisor) waitForAPIServer(ctx context.Context, comp component.Component) bool {
	answering := s.outage.answering()
	select {
	case <-answering:
		return true
	default:
	}
	s.logger.Printf("holding %s until the API server answers", comp.Name)
	select {
	case <-answering:
		return true
	case <-ctx.Done():
		return false
	}
}
