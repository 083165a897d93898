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
// enough for the held components to stop well within it.

// silenceLimit is how long the API server may be silent before components
// HeldDuringOutages stop: half the time the controller-manager needs to
// judge a node dead into an outage, a grace period after the last
// renewal it saw (NodeLeaseRenewInterval), so no sooner than the grace
// period less a renew interval.
func silenceLimit(c *v1alpha1.Cluster) time.Duration {
	earliest := c.NodeLifecycle.NodeMonitorGracePeriod.Duration - c.NodeLeaseRenewInterval()
	var clock *v1alpha1.Clock
	if c.Status != nil {
		clock = c.Status.Clock
	}
	return max(clusterclock.RealTime(earliest/2, clock), minProbe)
}

// probeEvery is how often a probe starts: a quarter of the silence limit,
// at least minProbe and at most twice a second.
func probeEvery(limit time.Duration) time.Duration {
	return min(max(limit/4, minProbe), 500*time.Millisecond)
}

const (
	minProbe = 50 * time.Millisecond
	// Probes overlap: silence is the time since the last answer, not a
	// probe's deadline, so a busy server whose /readyz takes longer than
	// the limit (at 60× 333 ms, on a machine where its Lease renewals
	// still land) is not taken for a silent one — which used to restart
	// the controller-manager again and again, each start loading the
	// server further. This many probes wait at once while the server is
	// frozen, each up to 2 s (getOK).
	probesInFlight = 8
)

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
	probe := func(ctx context.Context) error { return controlplane.ProbeReadyz(ctx, client, s.config()) }
	limit := func() time.Duration { return silenceLimit(s.config()) }
	watchSilence(ctx, probe, limit, func(answering bool, silent time.Duration, why string) {
		if !s.outage.set(answering) {
			return
		}
		if answering {
			s.logger.Printf("the API server answers again")
			return
		}
		s.logger.Printf("the API server has not answered for %s (%s)", silent.Round(time.Millisecond), why)
		for _, comp := range controlplane.Components() {
			if comp.HeldDuringOutages {
				s.askRestart(comp.Name, restartRequest{kill: true,
					reason: "the API server does not answer; it judges nodes by Leases nobody can renew now, so it waits for the server"})
			}
		}
	})
}

// watchSilence starts a probe every probeEvery(limit()) until ctx ends,
// and reports each answer (answering true) and, at each start, a silence
// of limit() or more since the last answer, with the last probe's error.
func watchSilence(ctx context.Context, probe func(context.Context) error, limit func() time.Duration,
	report func(answering bool, silent time.Duration, why string)) {
	answers := make(chan error, probesInFlight)
	inFlight := 0
	lastAnswer := time.Now()
	var lastErr error
	tick := time.NewTicker(minProbe)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case err := <-answers:
			inFlight--
			if lastErr = err; err == nil {
				lastAnswer = time.Now()
				report(true, 0, "")
			}
			continue
		case <-tick.C:
		}
		l := limit()
		tick.Reset(probeEvery(l))
		if inFlight < probesInFlight {
			inFlight++
			go func() { answers <- probe(ctx) }()
		}
		if silent := time.Since(lastAnswer); silent >= l {
			why := "its probes still wait"
			if lastErr != nil {
				why = lastErr.Error()
			}
			report(false, silent, why)
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
