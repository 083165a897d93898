package dpdb

import (
	"context"
	"strings"
	"testing"
)

// A starting controller refuses evictions rather than decide without
// its caches; once caught up it decides.
func TestWaitCaughtUp(t *testing.T) {
	caughtUp := make(chan struct{})
	wh := &webhook{caughtUp: caughtUp}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if v := wh.waitCaughtUp(ctx); v.allowed || !strings.Contains(v.reason, "still starting") {
		t.Errorf("starting: %+v, want a refusal", v)
	}
	close(caughtUp)
	if v := wh.waitCaughtUp(context.Background()); !v.allowed {
		t.Errorf("caught up: %+v, want allowed", v)
	}
}
