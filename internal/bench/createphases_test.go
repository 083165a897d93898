package bench

import (
	"testing"
	"time"

	"github.com/kubesim/kubesim/internal/supervisor"
)

func TestCreatePhases(t *testing.T) {
	began := time.Date(2026, 11, 23, 19, 10, 39, 900_000_000, time.Local)
	at := func(ms int) time.Time { return began.Add(time.Duration(ms) * time.Millisecond) }
	events := []supervisor.Event{
		{At: at(100), Event: supervisor.EventStarted, Component: "etcd"},
		{At: at(350), Event: supervisor.EventReady, Component: "etcd"},
		{At: at(400), Event: supervisor.EventStarted, Component: "kube-apiserver"},
		{At: at(2400), Event: supervisor.EventReady, Component: "kube-apiserver"},
		{At: at(2600), Event: supervisor.EventSetUp, Component: "kube-apiserver"},
		{At: at(3600), Event: supervisor.EventReady, Component: "dpdb-controller"},
		{At: at(3700), Event: supervisor.EventClusterStarted},
		// A restart later on does not move the phase it began.
		{At: at(3750), Event: supervisor.EventStarted, Component: "etcd"},
	}
	got, err := createPhases(events, began, at(3800))
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{100, 250, 2050, 200, 1100, 100}
	for i := range want {
		if got[i] != want[i]*time.Millisecond {
			t.Errorf("%s: %s, want %dms", CreatePhases[i].Name, got[i], want[i])
		}
	}
	if _, err := createPhases(events[:3], began, at(3800)); err == nil {
		t.Error("a record without the API server's events: no error")
	}
}
