package supervisor

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/kubesim/kubesim/internal/clusterdir"
)

// A start of the cluster, as the supervisor records it for whoever times
// it (`kubesim bench create`): when each component's process started,
// when it was ready and set up, and when the whole cluster had started.
// The record is a file of its own, one JSON event a line, begun afresh at
// each start; the log says the same in words.

// What happened in an Event.
const (
	EventStarted        = "started"
	EventReady          = "ready"
	EventSetUp          = "set-up"
	EventClusterStarted = "cluster-started"
)

// Event is one line of the record.
type Event struct {
	At        time.Time `json:"at"`
	Event     string    `json:"event"`
	Component string    `json:"component,omitempty"`
}

// startupRecord appends events to a cluster's record.
type startupRecord struct {
	mu   sync.Mutex
	path string
}

// newStartupRecord begins the record of a start, removing the last one's.
func newStartupRecord(d clusterdir.Dir) *startupRecord {
	path := d.StartupFile()
	_ = os.Remove(path)
	return &startupRecord{path: path}
}

// add records that event happened to component (empty: to the cluster)
// now. A record that cannot be written costs the timing, not the start.
func (r *startupRecord) add(event, component string) {
	line, _ := json.Marshal(Event{At: time.Now(), Event: event, Component: component})
	r.mu.Lock()
	defer r.mu.Unlock()
	f, err := os.OpenFile(r.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.Write(append(line, '\n'))
}

// Startup reads the record of the cluster's last start, in the order the
// events happened.
func Startup(d clusterdir.Dir) ([]Event, error) {
	f, err := os.Open(d.StartupFile())
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("cluster %q has no startup record (%s): it was started by an older kubesim", d.Name, d.StartupFile())
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var events []Event
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("%s: %w", d.StartupFile(), err)
		}
		events = append(events, e)
	}
	return events, sc.Err()
}
