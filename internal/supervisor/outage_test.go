package supervisor

import (
	"testing"
	"time"
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

func TestSilenceLimitWithinHalfGrace(t *testing.T) {
	for _, grace := range []time.Duration{3 * time.Second, 10 * time.Second, 40 * time.Second} {
		if l := silenceLimit(grace); l >= grace/2 || l <= 0 {
			t.Errorf("grace %s: silence limit %s is not within half of it", grace, l)
		}
	}
}
