package bench

import (
	"strings"
	"testing"
	"time"
)

func TestCreatePhases(t *testing.T) {
	log := `supervisor: 2026/11/23 19:10:40.000000 started etcd (pid 1): kubesim component etcd
supervisor: 2026/11/23 19:10:40.250000 etcd is ready
supervisor: 2026/11/23 19:10:40.300000 started kube-apiserver (pid 2): kubesim component kube-apiserver
supervisor: 2026/11/23 19:10:42.300000 kube-apiserver is ready
supervisor: 2026/11/23 19:10:42.500000 kube-apiserver set up
supervisor: 2026/11/23 19:10:43.500000 dpdb-controller is ready
supervisor: 2026/11/23 19:10:43.600000 cluster started
`
	began := time.Date(2026, 11, 23, 19, 10, 39, 900_000_000, time.Local)
	ended := began.Add(3800 * time.Millisecond)
	got, err := createPhases(strings.NewReader(log), began, ended)
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{100, 250, 2050, 200, 1100, 100}
	for i := range want {
		if got[i] != want[i]*time.Millisecond {
			t.Errorf("%s: %s, want %dms", CreatePhases[i].Name, got[i], want[i])
		}
	}
	if _, err := createPhases(strings.NewReader("supervisor: junk\n"), began, ended); err == nil {
		t.Error("a log without the marks: no error")
	}
}
