package supervisor

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// The held components stop well before the controller-manager can judge
// a node dead (a grace period after the last renewal it saw), on any
// clock: the silence limit plus a probe's interval (silence is counted
// from the last answer, whatever a probe's deadline), in real time,
// scaled, is at most half of it.
func TestSilenceLimitBeforeANodeCanBeJudged(t *testing.T) {
	for _, scale := range []int32{1, 10, 20, 60} {
		for _, grace := range []time.Duration{3 * time.Second, 10 * time.Second, 40 * time.Second, 50 * time.Second} {
			if scale > 1 && grace < 40*time.Second {
				// A scaled cluster keeps upstream's grace period (50s):
				// the point of one is upstream's timings.
				continue
			}
			c := &v1alpha1.Cluster{ClusterSpec: v1alpha1.ClusterSpec{TimeScale: scale}}
			c.NodeLifecycle.NodeMonitorGracePeriod = &metav1.Duration{Duration: grace}
			c.Status = &v1alpha1.ClusterStatus{Clock: &v1alpha1.Clock{Scale: scale}}
			l := silenceLimit(c)
			worst := (l + probeEvery(l)) * time.Duration(scale)
			if judged := grace - c.NodeLeaseRenewInterval(); worst > judged*5/8 || l <= 0 {
				t.Errorf("%dx, grace %s: stopped up to %s of cluster time into an outage; a node can be judged dead after %s", scale, grace, worst, judged)
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

// silenceReports runs watchSilence with probe and a limit of 1s (probes
// every 250ms) and sends each report on the channel it returns.
func silenceReports(t *testing.T, probe func(context.Context) error) <-chan bool {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	reports := make(chan bool, 1000)
	done := make(chan struct{})
	go func() {
		defer close(done)
		watchSilence(ctx, probe, func() time.Duration { return time.Second },
			func(answering bool, _ time.Duration, _ string) { reports <- answering })
	}()
	t.Cleanup(func() { cancel(); <-done })
	return reports
}

// A busy server whose /readyz takes longer than the silence limit still
// answers: at 60x (a limit of 333ms) the controller-manager was restarted
// every second while its Leases' renewals landed.
func TestSlowAnswersAreNoSilence(t *testing.T) {
	reports := silenceReports(t, func(ctx context.Context) error {
		select {
		case <-time.After(1500 * time.Millisecond):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	// The first answer ends the silence of the start; from then on every
	// report must be an answer.
	for answering := false; !answering; {
		answering = <-reports
	}
	answers := 0
	for deadline := time.After(10 * time.Second); answers < 12; {
		select {
		case answering := <-reports:
			if !answering {
				t.Fatalf("a server answering every probe in 1.5s was taken for silent after %d answers", answers)
			}
			answers++
		case <-deadline:
			t.Fatalf("%d answers in 10s, probes every 250ms", answers)
		}
	}
}

// A frozen server is silent within the limit and a probe's interval, and
// answers again once thawed.
func TestFrozenServerIsSilent(t *testing.T) {
	var mu sync.Mutex
	answer := make(chan struct{}) // closed while the server answers
	close(answer)
	reports := silenceReports(t, func(ctx context.Context) error {
		mu.Lock()
		thawed := answer
		mu.Unlock()
		select {
		case <-thawed:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	if !<-reports {
		t.Fatal("an answering server reported silent first")
	}
	thaw := make(chan struct{})
	mu.Lock()
	answer = thaw
	mu.Unlock()
	froze := time.Now()
	for <-reports {
	}
	if d := time.Since(froze); d < 750*time.Millisecond || d > 3*time.Second {
		t.Errorf("silence reported %s after the freeze, want about 1-1.25s", d)
	}
	close(thaw)
	deadline := time.After(3 * time.Second)
	for {
		select {
		case answering := <-reports:
			if answering {
				return
			}
		case <-deadline:
			t.Fatal("no answer within 3s of the thaw")
		}
	}
}
