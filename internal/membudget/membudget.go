// Package membudget holds a component's Go memory to its share of the
// cluster's memory budget without letting the garbage collector run away.
//
// Components run with GOGC=400: collecting rarely saves the CPU a 2-core
// machine lacks, but lets the heap grow to five times what is live. A plain
// GOMEMLIMIT caps that, yet turns into a collection loop once the live heap
// itself nears the limit (a cluster with more pods than the budget was made
// for). So the limit is the share only while the live heap is small; after
// each collection it is raised to the live heap plus as much again when
// that is more — the memory, and about the CPU, of GOGC=100, upstream's
// default — but plus at most MaxHeadroom: how often the collector runs
// follows the bytes allocated between collections, which follow the work
// (pods per second), not the heap's size, so a large heap (100,000 pods)
// needs no more room than a middling one.
package membudget

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
)

// EnvVar carries a component's share of the budget, in bytes, from the
// supervisor to the component.
const EnvVar = "KUBESIM_MEMORY_LIMIT"

// MaxHeadroom bounds the room the limit leaves above the live heap.
const MaxHeadroom = 2 << 30

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

// Keep sets the memory limit to share now, and after every collection to
// Limit(share, live heap).
func Keep(share int64) {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	adjust := func() {
		metrics.Read(sample)
		debug.SetMemoryLimit(Limit(share, int64(sample[0].Value.Uint64())))
	}
	adjust()
	afterEachGC(adjust)
}

// Limit is the memory limit for a share and a live heap.
func Limit(share, live int64) int64 {
	return max(share, live+min(live, MaxHeadroom))
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
