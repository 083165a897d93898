// Package bench measures what the scaled clock costs: run it with the stock
// go and with the overlay's (patches/go/README.md) and compare, at
// KUBESIM_TIME_SCALE unset (the cost must be nil) and at 10.
package bench

import (
	"sync"
	"testing"
	"time"
)

func BenchmarkNow(b *testing.B) {
	for b.Loop() {
		time.Now()
	}
}

func BenchmarkSince(b *testing.B) {
	start := time.Now()
	for b.Loop() {
		time.Since(start)
	}
}

// BenchmarkTimers starts and stops timers, as deadlines and timeouts do.
func BenchmarkTimers(b *testing.B) {
	for b.Loop() {
		t := time.NewTimer(time.Hour)
		t.Stop()
	}
}

// BenchmarkTimerFires fires 100 short timers at once on several goroutines
// and waits for them: the scheduler's timer wait (netpoll) in the loop.
func BenchmarkTimerFires(b *testing.B) {
	for b.Loop() {
		var wg sync.WaitGroup
		for range 100 {
			wg.Add(1)
			time.AfterFunc(10*time.Microsecond, wg.Done)
		}
		wg.Wait()
	}
}
