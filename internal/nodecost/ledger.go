package nodecost

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// The ledger is a cluster's record of its NodePools' nodes: an Entry when
// a node appears and one when it goes, one JSON object a line, only ever
// appended to (a crash loses at most the line being written). Times are
// the cluster's clock: the recorder runs on it.

// What an Entry records.
const (
	Up   = "up"   // the node appeared: At is its creationTimestamp
	Down = "down" // the node went: At is its deletionTimestamp, or when it was seen gone
)

// Entry is one line of the ledger.
type Entry struct {
	Event string    `json:"event"`
	At    time.Time `json:"at"`
	Node  string    `json:"node"`
	// UID tells a node from a later one of the same name.
	UID          types.UID `json:"uid"`
	NodePool     string    `json:"nodePool"`
	InstanceType string    `json:"instanceType,omitempty"`
	CapacityType string    `json:"capacityType,omitempty"`
	PricePerHour float64   `json:"pricePerHour,omitempty"`
	// Note says why At is not the node's own timestamp, when it is not.
	Note string `json:"note,omitempty"`
}

// ReadLedger reads the ledger at path; one not yet written has no
// entries. A line that does not parse is skipped: it can only be one a
// crash cut short, and the recorder's next start sets the ledger right
// (see Record).
func ReadLedger(path string) ([]Entry, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var entries []Entry
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		var e Entry
		if len(line) > 0 && json.Unmarshal(line, &e) == nil && (e.Event == Up || e.Event == Down) {
			entries = append(entries, e)
		}
		if err == io.EOF {
			return entries, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
}

// ledger appends entries to the file at path.
type ledger struct {
	f *os.File
}

// openLedger opens the ledger at path for appending, making it (0600) if
// it is not there. A last line a crash cut short is ended first, so that
// the next entry is a line of its own.
func openLedger(path string) (*ledger, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err == nil && info.Size() > 0 {
		last := make([]byte, 1)
		if _, err = f.ReadAt(last, info.Size()-1); err == nil && last[0] != '\n' {
			_, err = f.Write([]byte{'\n'})
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &ledger{f: f}, nil
}

// append writes e as one line, in one write.
func (l *ledger) append(e Entry) error {
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if _, err := l.f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("%s: %w", l.f.Name(), err)
	}
	return nil
}

func (l *ledger) Close() error { return l.f.Close() }
