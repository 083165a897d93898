package dpdb

import (
	"context"
	"strings"
	"testing"
)

// A starting controller refuses evictions rather than decide without
// its caches; once caught up it decides.
func TestWaitCaughtUp(t *testing.T) {
	c := &Controller{caughtUp: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if msg := c.waitCaughtUp(ctx); !strings.Contains(msg, "still starting") {
		t.Errorf("starting: %q, want a refusal", msg)
	}
	close(c.caughtUp)
	if msg := c.waitCaughtUp(context.Background()); msg != "" {
		t.Errorf("caught up: %q, want none", msg)
	}
}
