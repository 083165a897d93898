package membudget

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestLimitIsTheShareUntilTheLiveHeapOutgrowsIt(t *testing.T) {
	const mi = 1 << 20
	for _, c := range []struct{ share, live, want int64 }{
		{900 * mi, 100 * mi, 900 * mi},
		{900 * mi, 450 * mi, 900 * mi},
		{900 * mi, 600 * mi, 1200 * mi},
		{0, 10 * mi, 20 * mi},
		{900 * mi, 6000 * mi, 8048 * mi}, // at most MaxHeadroom above the live heap
	} {
		if got := Limit(c.share, c.live); got != c.want {
			t.Errorf("Limit(%d Mi, %d Mi live) = %d Mi, want %d Mi", c.share/mi, c.live/mi, got/mi, c.want/mi)
		}
	}
}

var retained [][]byte

func TestKeepRaisesTheLimitAfterACollectionWhenTheLiveHeapGrows(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	const share = 8 << 20
	Keep(share)
	if got := debug.SetMemoryLimit(-1); got < share {
		t.Fatalf("limit %d after Keep, want at least the share %d", got, share)
	}
	for range 64 { // 64 MiB live: well past the share
		retained = append(retained, make([]byte, 1<<20))
	}
	defer func() { retained = nil }()
	deadline := time.Now().Add(10 * time.Second)
	for debug.SetMemoryLimit(-1) < 2*64<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("limit %d after collections with 64 MiB live, want at least %d", debug.SetMemoryLimit(-1), 2*64<<20)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // the finalizer runs on its own goroutine
	}
}
