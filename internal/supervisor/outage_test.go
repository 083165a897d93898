package supervisor

import (
	"testing"
	"time"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

func TestOutageGate(t *testing.T) {
	g := newOutageGate()
	closed := func() bool {
		select {
		case <-g.answering():
			return true
		default:
			return false
		}
	}
	if !closed() {
		t.Fatal("a new gate must say the server answers")
	}
	if g.set(true) {
		t.Error("answering → answering reported as a change")
	}
	wait := func() <-chan struct{} { return g.answering() }()
	if !g.set(false) || closed() {
		t.Fatal("an outage must be a change and hold the gate")
	}
	if g.set(false) {
		t.Error("a continuing outage reported as a change")
	}
	held := g.answering()
	if !g.set(true) || !closed() {
		t.Fatal("the server answering again must open the gate")
	}
	select {
	case <-held:
	default:
		t.Error("a component held during the outage is not released")
	}
	select {
	case <-wait:
	default:
		t.Error("the gate taken before the outage is not open")
	}
}

// The held components stop within half a grace period of cluster time
// (the soonest a node can be judged dead), on any clock: the silence
// limit plus a probe's interval and timeout, in real time, scaled.
func TestSilenceLimitWithinHalfGrace(t *testing.T) {
	for _, scale := range []int32{1, 10, 20, 60} {
		clock := &v1alpha1.Clock{Scale: scale}
		for _, grace := range []time.Duration{3 * time.Second, 10 * time.Second, 40 * time.Second, 50 * time.Second} {
			if scale > 1 && grace < 40*time.Second {
				// A scaled cluster keeps upstream's grace period (50s):
				// the point of one is upstream's timings.
				continue
			}
			l := silenceLimit(grace, clock)
			every, timeout := probeTimings(l)
			worst := (l + every + timeout) * time.Duration(scale)
			if worst >= grace/2 || l <= 0 {
				t.Errorf("%dx, grace %s: stopped up to %s of cluster time into an outage, not within half the grace period", scale, grace, worst)
			}
		}
	}
}

// At 20x a crashing API server was restarted 16s later, 320s of cluster
// time: past the default eviction toleration. The backoff is cluster time.
func TestRestartDelayIsClusterTime(t *testing.T) {
	if d := restartDelay(maxBackoff, &v1alpha1.Clock{Scale: 20}); d != maxBackoff/20 {
		t.Errorf("at 20x, the longest backoff is %s of real time, want %s", d, maxBackoff/20)
	}
	if d := restartDelay(minBackoff, &v1alpha1.Clock{Scale: 60}); d != minRestartDelay {
		t.Errorf("at 60x, the shortest backoff is %s, want the floor %s", d, minRestartDelay)
	}
	if d := restartDelay(minBackoff, nil); d != minBackoff {
		t.Errorf("on real time: %s, want %s", d, minBackoff)
	}
}
