package scale

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
)

func TestParallelDoesEachIndexOnce(t *testing.T) {
	const n = 1000
	var seen [n]atomic.Int32
	if err := Parallel(context.Background(), n, 8, func(_ context.Context, i int) error {
		seen[i].Add(1)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for i := range seen {
		if got := seen[i].Load(); got != 1 {
			t.Fatalf("index %d done %d times, want once", i, got)
		}
	}
}

func TestParallelStopsAtTheFirstError(t *testing.T) {
	boom := errors.New("boom")
	var calls atomic.Int32
	err := Parallel(context.Background(), 10_000, 4, func(ctx context.Context, i int) error {
		calls.Add(1)
		if i == 3 {
			return boom
		}
		<-ctx.Done() // the others wait for the error to cancel them
		return ctx.Err()
	})
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want the first error, boom", err)
	}
	if c := calls.Load(); c > 8 {
		t.Errorf("%d calls after the error, want the pool stopped", c)
	}
}

func TestParallelReturnsTheContextsError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var calls atomic.Int32
	err := Parallel(ctx, 100, 4, func(context.Context, int) error { calls.Add(1); return nil })
	if !errors.Is(err, context.Canceled) || calls.Load() != 0 {
		t.Errorf("err = %v after %d calls, want context.Canceled and none", err, calls.Load())
	}
}

func TestParallelWithNothingToDo(t *testing.T) {
	if err := Parallel(context.Background(), 0, 4, func(context.Context, int) error {
		t.Error("called with n = 0")
		return nil
	}); err != nil {
		t.Error(err)
	}
}
