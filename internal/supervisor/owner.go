package supervisor

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/kubesim/kubesim/internal/clusterdir"
)

// A cluster may have an owner: a process — a test run, a CI job's shell —
// whose exit stops the cluster, so an owner killed before it could clean
// up leaves no cluster running.

// ownerPoll is how often the supervisor looks for its owner.
const ownerPoll = time.Second

// Owner is a running process a cluster can belong to.
type Owner struct{ rec pidRecord }

// NewOwner checks that process pid runs and records it.
func NewOwner(pid int) (Owner, error) {
	st, err := readProcStat(pid)
	if pid <= 1 || err != nil || st.state == 'Z' {
		return Owner{}, fmt.Errorf("--owner-pid: no running process %d; give the PID of the process whose exit is to stop the cluster, e.g. $$", pid)
	}
	return Owner{pidRecord{pid: pid, start: st.start}}, nil
}

// Write makes o the cluster's owner.
func (o Owner) Write(d clusterdir.Dir) error {
	return os.WriteFile(d.OwnerFile(), []byte(o.rec.String()), 0o600)
}

// Disown leaves the cluster to nobody: a cluster started again by hand
// belongs to whoever started it.
func Disown(d clusterdir.Dir) error {
	if err := os.Remove(d.OwnerFile()); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// readOwner reads the cluster's owner, if it has one.
func readOwner(d clusterdir.Dir) (pidRecord, bool) {
	data, err := os.ReadFile(d.OwnerFile())
	if err != nil {
		return pidRecord{}, false
	}
	r, err := parsePIDRecord(data)
	return r, err == nil
}

// stopWhenOwnerExits calls stop once the cluster's owner has exited.
func (s *supervisor) stopWhenOwnerExits(ctx context.Context, stop func()) {
	owner, ok := readOwner(s.dir)
	if !ok {
		return
	}
	tick := time.NewTicker(ownerPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if !owner.alive() {
				s.logger.Printf("the cluster's owner (pid %d) has exited: stopping the cluster", owner.pid)
				stop()
				return
			}
		}
	}
}
