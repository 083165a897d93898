package membudget

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
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

func TestShouldTrimOnlyRoomBeyondTheLiveHeapOfAQuietProcess(t *testing.T) {
	const mi = 1 << 20
	for _, c := range []struct {
		room, live, allocated uint64
		want                  bool
	}{
		{500 * mi, 240 * mi, 5 * mi, true},    // an idle API server holding its busy spell's room
		{500 * mi, 240 * mi, 100 * mi, false}, // a busy one: the room lasts five intervals
		{100 * mi, 240 * mi, 0, false},        // room under half the live heap
		{6 * mi, 2 * mi, 0, false},            // too little to bother
		{17 * mi, 18 * mi, 1 * mi, true},      // an idle usage-metrics
		{96 * mi, 8 * mi, 11 * mi, true},      // a quiet small process
		{96 * mi, 8 * mi, 13 * mi, false},     // eight intervals is the bar
	} {
		if got := shouldTrim(c.room, c.live, c.allocated); got != c.want {
			t.Errorf("shouldTrim(%d Mi room, %d Mi live, %d Mi allocated) = %v, want %v", c.room/mi, c.live/mi, c.allocated/mi, got, c.want)
		}
	}
}

var garbage [][]byte

func TestAQuietProcessHandsItsRoomBack(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(10000)) // nothing but the trimmer collects
	released := func() uint64 {
		s := []metrics.Sample{{Name: "/memory/classes/heap/released:bytes"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	runtime.GC()
	for range 256 {
		garbage = append(garbage, make([]byte, 1<<20))
	}
	garbage = nil // 256 MiB of room, nothing of it live
	before := released()

	stop := make(chan struct{})
	defer close(stop)
	go trimWhenQuiet(20*time.Millisecond, stop)
	deadline := time.Now().Add(10 * time.Second)
	for released() < before+200<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("%d MiB released after 10s of quiet, want 200 MiB more than the %d MiB before", released()>>20, before>>20)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var retained [][]byte

func TestKeepLiftsTheLimitWhenTheLiveHeapOutgrowsHalfTheShare(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	const share = 8 << 20
	runtime.GC() // the live heap Keep starts from is small
	defer Keep(share)()
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

func TestTrimDropsWhatPoolsHold(t *testing.T) {
	// One P: a pool keeps what was put on each P apart, and a Get on
	// another P would not see it even before a collection.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var pool sync.Pool // no New: Get returns nil once the pool is empty
	pool.Put(make([]byte, 1<<20))
	trim()
	if got := pool.Get(); got != nil {
		t.Fatalf("after a trim a sync.Pool still gave back its %d-byte buffer: the trim's memory stays in the heap", len(got.([]byte)))
	}
}
