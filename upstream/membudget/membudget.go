// Package membudget holds a component's Go memory to its share of the
// cluster's memory budget without letting the garbage collector run away.
//
// Components run with GOGC=400: collecting rarely saves the CPU a 2-core
// machine lacks, but lets the heap grow to five times what is live. While
// the live heap is at most half the share, a memory limit of the share caps
// that. Past it a limit turns into a collection loop: the limit counts all
// the runtime's memory, fragmentation included, and once 100,000 pods are
// deleted that alone can fill the room a limit leaves above the live heap
// (measured: half of every component's CPU went to collecting). So the
// limit is lifted and GOGC lowered to 100, upstream's default, whose pacing
// follows the live heap only. Past MaxHeadroom GOGC lowers further: how
// often the collector runs follows the bytes allocated between collections,
// which follow the work (pods per second), not the heap's size, so a large
// heap (100,000 pods) needs no more room than a middling one.
//
// The room a busy spell grew stays the process's until something hands it
// back, and the runtime does not while the heap is under its goal: a cluster
// left idle after start-up, or after a burst of pods, sat at its busiest RSS
// for good. So once a process goes quiet, the room it holds beyond its live
// heap goes back to the system.
package membudget

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync"
	"time"
)

// EnvVar carries a component's share of the budget, in bytes, from the
// supervisor to the component.
const EnvVar = "KUBESIM_MEMORY_LIMIT"

// MaxHeadroom bounds the room left above a live heap larger than it.
const MaxHeadroom = 2 << 30

// NoLimit is the memory limit of a runtime that has none.
const NoLimit = math.MaxInt64

// FromEnv keeps the share EnvVar names, unless the user set GOMEMLIMIT,
// which then stands as given.
func FromEnv() {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return
	}
	if share, err := strconv.ParseInt(os.Getenv(EnvVar), 10, 64); err == nil && share > 0 {
		Keep(share)
	}
}

// Setting is how the collector runs: its memory limit and GOGC.
type Setting struct {
	Limit   int64
	Percent int
}

// For is the setting for a share, a live heap and the process's GOGC.
func For(share, live int64, gogc int) Setting {
	if 2*live <= share {
		return Setting{Limit: share, Percent: gogc}
	}
	percent := min(gogc, 100)
	if live > MaxHeadroom {
		percent = min(percent, int(MaxHeadroom*100/live))
	}
	return Setting{Limit: NoLimit, Percent: max(percent, 1)}
}

// Keep applies For(share, live heap) now and after every collection, and
// trims the heap whenever the process goes quiet, until stop is called.
func Keep(share int64) (stop func()) {
	gogc := debug.SetGCPercent(-1) // the only way to read it is to set it
	debug.SetGCPercent(gogc)
	if gogc < 0 {
		// GOGC=off: the user wants collections at the limit only.
		debug.SetMemoryLimit(share)
		return func() {}
	}
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var last Setting
	adjust := func() {
		metrics.Read(sample)
		if s := For(share, int64(sample[0].Value.Uint64()), gogc); s != last {
			debug.SetGCPercent(s.Percent)
			debug.SetMemoryLimit(s.Limit)
			last = s
		}
	}
	adjust()
	done := make(chan struct{})
	afterEachGC(adjust, done)
	go trimWhenQuiet(trimInterval, done)
	return sync.OnceFunc(func() { close(done) })
}

// trimInterval is how often a kept process looks whether it has gone quiet.
const trimInterval = 10 * time.Second

// quietIntervals: a process is quiet when the room its heap holds would
// last this many intervals at the pace it allocated in the last one.
const quietIntervals = 8

// minTrim is the least room worth handing back. A small one counts: an
// idle usage-metrics' heap is ~18 MB live with as much room again, and a
// trim costs a collection of the live heap (milliseconds at that size).
const minTrim = 8 << 20

// shouldTrim says whether a heap holding room bytes beyond its live ones,
// which allocated bytes in the last interval, should hand the room back:
// the room is more than half the live heap (and minTrim), and the process
// is quiet. A busy process keeps its room; giving it back would only cost
// page faults to take it again.
func shouldTrim(room, live, allocated uint64) bool {
	return room > max(live/2, minTrim) && allocated*quietIntervals < room
}

// trimWhenQuiet hands the heap's room back to the system, after a
// collection, whenever shouldTrim says so, until stop is closed.
func trimWhenQuiet(interval time.Duration, stop <-chan struct{}) {
	s := []metrics.Sample{
		{Name: "/gc/heap/allocs:bytes"},
		{Name: "/gc/heap/live:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"}, // live, and garbage not yet swept
		{Name: "/memory/classes/heap/unused:bytes"},  // free slots in spans in use
		{Name: "/memory/classes/heap/free:bytes"},    // free spans not yet returned
	}
	room := func() (room, live uint64) {
		metrics.Read(s)
		live = s[1].Value.Uint64()
		held := s[2].Value.Uint64() + s[3].Value.Uint64() + s[4].Value.Uint64()
		return held - min(held, live), live
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	// stuck is the room a trim could not give back, the slack of spans
	// that still hold a live object: trimming again for it would only
	// collect in vain.
	var before, stuck uint64
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		r, live := room()
		allocs := s[0].Value.Uint64()
		if before > 0 && shouldTrim(r-min(r, stuck), live, allocs-before) {
			trim()
			stuck, _ = room()
		}
		before = allocs
	}
}

// trim collects and hands the heap's free room back to the system. Twice:
// a collection moves what sync.Pools hold (gzip writers, encoders'
// buffers: megabytes in an idle API server) to their victim caches, and
// only the next one drops it.
func trim() {
	debug.FreeOSMemory()
	debug.FreeOSMemory()
}

// afterEachGC calls f after every garbage collection until done is closed:
// a finalizer runs once its object is found unreachable, which a collection
// does, and re-arms.
func afterEachGC(f func(), done <-chan struct{}) {
	s := &sentinel{}
	runtime.SetFinalizer(s, func(*sentinel) {
		select {
		case <-done:
			return
		default:
		}
		f()
		afterEachGC(f, done)
	})
}

// sentinel has a pointer so it is not batched with others by the tiny
// allocator, whose objects' finalizers may never run.
type sentinel struct{ _ *int }
