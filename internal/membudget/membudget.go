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
package membudget

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
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

// Keep applies For(share, live heap) now and after every collection.
func Keep(share int64) {
	gogc := debug.SetGCPercent(-1) // the only way to read it is to set it
	debug.SetGCPercent(gogc)
	if gogc < 0 {
		// GOGC=off: the user wants collections at the limit only.
		debug.SetMemoryLimit(share)
		return
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
	afterEachGC(adjust)
}

// afterEachGC calls f after every garbage collection: a finalizer runs once
// its object is found unreachable, which a collection does, and re-arms.
func afterEachGC(f func()) {
	s := &sentinel{}
	runtime.SetFinalizer(s, func(*sentinel) {
		f()
		afterEachGC(f)
	})
}

// sentinel has a pointer so it is not batched with others by the tiny
// allocator, whose objects' finalizers may never run.
type sentinel struct{ _ *int }
