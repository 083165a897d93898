package components

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"
)

// A clone loads its objects with the controller-manager's pod controllers
// held (a ReplicaSet made before its pods would make them anew), and lets
// them go once every object is there. The hold is a file: while it exists
// when the controller-manager starts, the pod controllers are left out of
// its --controllers; once it is gone, the process executes itself again
// (the same pid, so its supervisor sees no exit) and starts with them.
// Only the controller-manager restarts: the API server, etcd, and the
// watches of the simulator and the scheduler keep running.

// holdPoll is how often a held controller-manager looks for its hold to
// be lifted.
const holdPoll = 50 * time.Millisecond

// holdPodControllers leaves names out of the --controllers of fs if the
// file held exists, and reports whether it did.
func holdPodControllers(fs *pflag.FlagSet, held string, names []string) (bool, error) {
	if held == "" {
		return false, nil
	}
	if _, err := os.Stat(held); errors.Is(err, os.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	disabled := make([]string, len(names))
	for i, n := range names {
		disabled[i] = "-" + n
	}
	value := strings.Join(disabled, ",")
	if f := fs.Lookup("controllers"); f != nil && !f.Changed {
		value = "*," + value // set the first time, a slice flag replaces its default
	}
	// Set again, it is added to.
	return true, fs.Set("controllers", value)
}

// waitUntilGone returns once path does not exist.
func waitUntilGone(path string) {
	for {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return
		}
		time.Sleep(holdPoll)
	}
}

// execAgain replaces the process with a new run of itself, with the same
// arguments; if it cannot, the process exits for its supervisor to start
// it again.
func execAgain() {
	klog.Flush()
	exe, err := os.Executable()
	if err == nil {
		err = syscall.Exec(exe, os.Args, os.Environ())
	}
	klog.ErrorS(err, "cannot execute itself again; exiting, for the supervisor to start it")
	klog.FlushAndExit(klog.ExitFlushTimeout, 1)
}
