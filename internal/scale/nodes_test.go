package scale

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"
)

// A cluster deleted (or stopped) under a wait for its nodes ends the wait
// with that news, not with the full timeout and a word about the simulator.
func TestWaitEndsWhenTheClusterIsGone(t *testing.T) {
	gone := errors.New(`cluster "blue" does not exist`)
	start := time.Now()
	err := Nodes(context.Background(), fake.NewClientset(), Options{
		Replicas: 2,
		Wait:     time.Minute, // nothing makes them Ready
		Gone:     func() error { return gone },
	})
	if !errors.Is(err, gone) {
		t.Errorf("got %v, want %v", err, gone)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("the wait took %s", took)
	}
}
