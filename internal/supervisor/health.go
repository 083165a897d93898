package supervisor

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/pki"
)

// What the supervisor knows to be wrong with a running cluster — a
// component's log that cannot be written, a component that keeps exiting —
// it records in a small file of the cluster's, for `kubesim get clusters`
// to show the cluster degraded, and why.

// The states of a running cluster.
const (
	StateRunning  = "running"
	StateDegraded = "degraded"
)

// Health is the record: a state, what caused it if it is not running, and
// since when the cluster has been in it.
type Health struct {
	State string    `json:"state"`
	Cause string    `json:"cause,omitempty"`
	Since time.Time `json:"since"`
}

// ReadHealth reads the record of a running cluster. A cluster whose
// supervisor keeps none (an older kubesim's) is running.
func ReadHealth(d clusterdir.Dir) (Health, error) {
	data, err := os.ReadFile(d.HealthFile())
	if errors.Is(err, os.ErrNotExist) {
		return Health{State: StateRunning}, nil
	}
	if err != nil {
		return Health{}, err
	}
	var h Health
	if err := json.Unmarshal(data, &h); err != nil {
		return Health{}, fmt.Errorf("%s: %w", d.HealthFile(), err)
	}
	return h, nil
}

// Kinds of problem a component can have, in the order the cause names them.
const (
	problemLog   = "log"
	problemCrash = "crash"
)

// healthSize is the size of the record on disk: every record is padded to
// it, so that on a full disk, where no new file can be written, it can
// still be overwritten in place.
const healthSize = 1024

// healthRecord keeps the record of a running cluster up to date.
type healthRecord struct {
	path  string
	order []string // the components, in the order the cause names them
	now   func() time.Time

	mu       sync.Mutex
	writing  bool                         // false until the supervisor holds the cluster
	problems map[string]map[string]string // component → kind → what is wrong
	written  Health
}

func newHealthRecord(d clusterdir.Dir, order []string) *healthRecord {
	return &healthRecord{path: d.HealthFile(), order: order, now: time.Now, problems: map[string]map[string]string{}}
}

// begin writes a fresh record, and from then on every change.
func (h *healthRecord) begin() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.writing = true
	h.written = Health{}
	return h.writeLocked()
}

// set records what is wrong with component of a kind of problem; "" says
// nothing is (any more).
func (h *healthRecord) set(component, kind, problem string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if problem == "" {
		delete(h.problems[component], kind)
	} else {
		if h.problems[component] == nil {
			h.problems[component] = map[string]string{}
		}
		h.problems[component][kind] = problem
	}
	if h.writing {
		_ = h.writeLocked()
	}
}

// current is the record as the problems say.
func (h *healthRecord) currentLocked() Health {
	var causes []string
	for _, name := range h.order {
		for _, kind := range []string{problemLog, problemCrash} {
			if p := h.problems[name][kind]; p != "" {
				causes = append(causes, name+": "+p)
			}
		}
	}
	if len(causes) == 0 {
		return Health{State: StateRunning}
	}
	return Health{State: StateDegraded, Cause: strings.Join(causes, "; ")}
}

// writeLocked writes the record if it changed: atomically if it can, else
// (a full disk) over the old one in place.
func (h *healthRecord) writeLocked() error {
	cur := h.currentLocked()
	if h.written.State == cur.State && h.written.Cause == cur.Cause {
		return nil
	}
	cur.Since = h.now().UTC()
	if cur.State == h.written.State {
		cur.Since = h.written.Since
	}
	data, err := encodeHealth(cur)
	if err != nil {
		return err
	}
	if err := pki.WriteFileAtomic(h.path, data); err != nil {
		_ = os.Remove(h.path + ".tmp")
		f, openErr := os.OpenFile(h.path, os.O_WRONLY, 0)
		if openErr != nil {
			return err
		}
		_, err = f.WriteAt(data, 0)
		if closeErr := f.Close(); err == nil {
			err = closeErr
		}
		if err != nil {
			return err
		}
	}
	h.written = cur
	return nil
}

// encodeHealth is the record as JSON padded with spaces to healthSize,
// its cause shortened to fit.
func encodeHealth(cur Health) ([]byte, error) {
	for {
		data, err := json.Marshal(cur)
		if err != nil {
			return nil, err
		}
		if len(data) < healthSize {
			data = append(data, '\n')
			for len(data) < healthSize {
				data = append(data, ' ')
			}
			return data, nil
		}
		cut := len(cur.Cause) - (len(data) - healthSize) - 8
		cur.Cause = strings.ToValidUTF8(cur.Cause[:max(cut, 0)], "") + "…"
	}
}

// logProblem is what a log sink of component reports to.
func (h *healthRecord) logProblem(component string) func(error) {
	return func(err error) {
		problem := ""
		if err != nil {
			problem = "cannot write its log: " + errorText(err)
		}
		h.set(component, problemLog, problem)
	}
}

// crashProblem says that a component has exited exits times, the last
// with err, and is being restarted.
func crashProblem(exits int, err error) string {
	if exits == 1 {
		return fmt.Sprintf("exited (%v); restarting", err)
	}
	return fmt.Sprintf("exited %d times (last: %v); restarting", exits, err)
}
