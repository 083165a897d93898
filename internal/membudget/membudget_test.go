package membudget

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestLimitWhileTheLiveHeapIsSmallThenGOGC(t *testing.T) {
	const mi = 1 << 20
	for _, c := range []struct {
		share, live int64
		gogc        int
		want        Setting
	}{
		{900 * mi, 100 * mi, 400, Setting{900 * mi, 400}},
		{900 * mi, 450 * mi, 400, Setting{900 * mi, 400}},
		{900 * mi, 600 * mi, 400, Setting{NoLimit, 100}},
		{900 * mi, 600 * mi, 50, Setting{NoLimit, 50}},   // a lower GOGC stays
		{900 * mi, 6000 * mi, 400, Setting{NoLimit, 34}}, // at most MaxHeadroom above the live heap
	} {
		if got := For(c.share, c.live, c.gogc); got != c.want {
			t.Errorf("For(%d Mi share, %d Mi live, GOGC %d) = %+v, want %+v", c.share/mi, c.live/mi, c.gogc, got, c.want)
		}
	}
}

var retained [][]byte

func TestKeepLiftsTheLimitWhenTheLiveHeapOutgrowsHalfTheShare(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	const share = 8 << 20
	runtime.GC() // the live heap Keep starts from is small
	Keep(share)
	if got := debug.SetMemoryLimit(-1); got != share {
		t.Fatalf("limit %d after Keep, want the share %d", got, share)
	}
	for range 64 { // 64 MiB live: well past the share
		retained = append(retained, make([]byte, 1<<20))
	}
	defer func() { retained = nil }()
	deadline := time.Now().Add(10 * time.Second)
	for debug.SetMemoryLimit(-1) != NoLimit {
		if time.Now().After(deadline) {
			t.Fatalf("limit %d after collections with 64 MiB live, want none", debug.SetMemoryLimit(-1))
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // the finalizer runs on its own goroutine
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC %d with the limit lifted, want 100", got)
	}
}
