package supervisor

import (
	"os"
	"testing"
)

// A start's record holds its events in order, and the next start begins
// a record of its own.
func TestStartupRecordIsBegunAfreshEachStart(t *testing.T) {
	d := tempCluster(t, "timed")
	if _, err := Startup(d); err == nil {
		t.Error("a cluster never started has a startup record")
	}
	r := newStartupRecord(d)
	r.add(EventStarted, "etcd")
	r.add(EventReady, "etcd")
	r.add(EventClusterStarted, "")
	events, err := Startup(d)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 3 || events[0].Component != "etcd" || events[1].Event != EventReady ||
		events[2].Event != EventClusterStarted || events[2].At.Before(events[0].At) {
		t.Errorf("record: %+v", events)
	}
	if info, err := os.Stat(d.StartupFile()); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("record file: %v, %v", info, err)
	}
	newStartupRecord(d).add(EventStarted, "etcd")
	if events, _ := Startup(d); len(events) != 1 {
		t.Errorf("the next start's record: %+v", events)
	}
}
