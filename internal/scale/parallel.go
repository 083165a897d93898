package scale

import (
	"context"
	"sync"
	"sync/atomic"
)

// Parallel calls do(ctx, i) for every i in [0, n) from workers goroutines.
// The first error cancels the ctx the others get, stops handing out work,
// and is what Parallel returns; if ctx ends first, its cause is returned.
func Parallel(ctx context.Context, n, workers int, do func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, min(workers, n)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := do(ctx, i); err != nil {
					cancel(err) // only the first cause is kept
					return
				}
			}
		})
	}
	wg.Wait()
	return context.Cause(ctx)
}
