// Package clusterclock is a cluster's scaled clock (Cluster.TimeScale): it
// chooses one when a cluster is made, puts processes on it through the
// environment the Go runtime of kubesim's build reads at start
// (patches/go/README.md), and says which clock this process runs on.
//
// On a scaled clock every wait is in cluster time: right for what the
// cluster models (leases, grace periods, a scenario's sleeps), too short
// for work that takes real time whatever the clock. Such a wait, in a
// process that may run on a cluster's clock, is written with Stretch, so
// that it lasts as long in real time on every clock. Those today, and why:
//
//   - cluster.Create: the control plane's start (supervisor.Launch's
//     wait), in `kubesim run`'s process.
//   - scale's waitReady: new nodes' registration by kubelet-sim, for a
//     scenario's node group scale.
//   - components' waitForGrants: the scheduler's poll, and each request,
//     while the API server writes the RBAC policy it starts under.
//   - components' waitForFile: the controller-manager's wait, and poll,
//     for the API server's set-up.
//   - the ReadHeaderTimeout of the servers in components (usage's
//     kubelet endpoint, the DPDB webhook, explain's recorder): a client's
//     headers arrive in real time.
//
// The supervisor keeps real time (its waits are for real work); it turns
// the cluster's durations into its own with RealTime.
package clusterclock

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/version"
	"github.com/kubesim/kubesim/upstream/clock"
)

// The variables patches/go's runtime reads at process start.
const (
	ScaleEnv  = clock.ScaleEnv
	EpochEnv  = clock.EpochEnv
	AnchorEnv = clock.AnchorEnv
)

// New is the clock of a cluster made now at scale, nil for real time. A
// process already on a scaled clock (`kubesim run` of a scaled scenario)
// gives the cluster its own clock, so that the two agree.
func New(scale int32) (*v1alpha1.Clock, error) {
	own := Own()
	if scale <= 1 {
		if own != nil {
			return nil, fmt.Errorf("timeScale: this run is on a clock %d× real time, and so must its clusters be: give each the same timeScale", own.Scale)
		}
		return nil, nil
	}
	if err := CheckBuild(); err != nil {
		return nil, err
	}
	if own != nil {
		if own.Scale != scale {
			return nil, fmt.Errorf("timeScale: %d, but this run is on a clock %d× real time: give its clusters the same timeScale", scale, own.Scale)
		}
		return own, nil
	}
	now := time.Now().UnixNano() // real: this process is not scaled
	return &v1alpha1.Clock{Scale: scale, Epoch: now, Anchor: now}, nil
}

// CheckBuild refuses a binary whose clock cannot be scaled.
func CheckBuild() error {
	if !version.ScaledClock() {
		return errors.New("timeScale (--time-scale): this kubesim was built without the scaled clock of patches/go: build it with `make build`")
	}
	return nil
}

// Own is the clock this process runs on, read from its environment as its
// runtime read it at start; nil for real time.
func Own() *v1alpha1.Clock {
	scale, err := strconv.ParseInt(os.Getenv(ScaleEnv), 10, 32)
	if err != nil || scale <= 1 || !version.ScaledClock() {
		return nil
	}
	epoch, err1 := strconv.ParseInt(os.Getenv(EpochEnv), 10, 64)
	anchor, err2 := strconv.ParseInt(os.Getenv(AnchorEnv), 10, 64)
	if err1 != nil || err2 != nil {
		return nil // the runtime refuses to start on these: not reached
	}
	return &v1alpha1.Clock{Scale: int32(scale), Epoch: epoch, Anchor: anchor}
}

// RealNow is the real time, whichever clock this process runs on: what a
// certificate made on a cluster's clock (a copy of a running scaled
// cluster, made by a command on its clock) must be valid from, for the
// supervisor, which keeps real time, to accept it.
func RealNow() time.Time {
	now := time.Now()
	c := Own()
	if c == nil {
		return now
	}
	return time.Unix(0, c.Anchor+(now.UnixNano()-c.Epoch)/int64(c.Scale))
}

// Env is what puts a process started with it on clock c (nothing for nil).
func Env(c *v1alpha1.Clock) []string {
	if c == nil {
		return nil
	}
	return []string{
		ScaleEnv + "=" + strconv.Itoa(int(c.Scale)),
		EpochEnv + "=" + strconv.FormatInt(c.Epoch, 10),
		AnchorEnv + "=" + strconv.FormatInt(c.Anchor, 10),
	}
}

// Same reports whether a and b are one clock (nil: real time).
func Same(a, b *v1alpha1.Clock) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// Reexec runs this command again, in place of this process, on clock c
// (real time for nil), unless it already runs on it; it returns nil only when there is nothing
// to do. A process's clock is fixed at its start: moving to a cluster's
// clock means starting anew.
func Reexec(c *v1alpha1.Clock) error {
	if Same(c, Own()) {
		return nil
	}
	if c != nil {
		if err := CheckBuild(); err != nil {
			return err
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	env := []string{}
	for _, kv := range os.Environ() {
		if !hasName(kv, ScaleEnv, EpochEnv, AnchorEnv) {
			env = append(env, kv)
		}
	}
	return syscall.Exec(exe, os.Args, append(env, Env(c)...))
}

func hasName(kv string, names ...string) bool {
	for _, n := range names {
		if len(kv) > len(n) && kv[:len(n)] == n && kv[len(n)] == '=' {
			return true
		}
	}
	return false
}

// Stretch is d of real time in this process's clock: how long a wait for
// work that takes real time (a process to start) must be, so that it
// means the same on every clock.
func Stretch(d time.Duration) time.Duration { return clock.Stretch(d) }

// RealTime is d of cluster time on clock c in real time (c nil: real
// time): how long a process on real time (the supervisor) waits for
// something measured on the cluster's clock.
func RealTime(d time.Duration, c *v1alpha1.Clock) time.Duration {
	if c == nil || c.Scale <= 1 {
		return d
	}
	return d / time.Duration(c.Scale)
}
