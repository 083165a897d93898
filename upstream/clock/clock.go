// Package clock is what a process of a cluster reads of the cluster's
// scaled clock (Cluster.TimeScale): the variables the Go runtime of
// kubesim's builds reads at start (patches/go/README.md), and Stretch for
// waits on real work. Package clusterclock chooses and sets the clock;
// this is the part the upstream components' wrappers, built for each
// Kubernetes version, need too.
package clock

import (
	"os"
	"strconv"
	"time"
)

// The variables patches/go's runtime reads at process start.
const (
	ScaleEnv  = "KUBESIM_TIME_SCALE"
	EpochEnv  = "KUBESIM_TIME_EPOCH"
	AnchorEnv = "KUBESIM_TIME_ANCHOR"
)

// Scale is how many times real time this process's clock runs, as its
// environment says: 1 for real time. Only a build with the scaled clock
// is ever given the variable (clusterclock.CheckBuild).
func Scale() int64 {
	scale, err := strconv.ParseInt(os.Getenv(ScaleEnv), 10, 32)
	if err != nil || scale <= 1 {
		return 1
	}
	return scale
}

// Stretch is d of real time in this process's clock: how long a wait for
// work that takes real time (a process to start) must be, so that it
// means the same on every clock.
func Stretch(d time.Duration) time.Duration {
	return d * time.Duration(Scale())
}
