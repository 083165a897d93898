package cluster

import (
	"os"
	"syscall"
	"testing"

	"github.com/kubesim/kubesim/internal/clusterdir"
)

// holdSupervisorLock makes d look running, as its supervisor's lock does.
func holdSupervisorLock(t *testing.T, d clusterdir.Dir) {
	t.Helper()
	f, err := os.OpenFile(d.LockFile(), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
}

func TestListShowsTheSupervisorsRecordOfARunningCluster(t *testing.T) {
	p, _ := testProvider(t)
	for _, name := range []string{"degraded", "fine", "stale", "stopped"} {
		newTestCluster(t, p, name)
	}
	degraded := `{"state":"degraded","cause":"etcd: cannot write its log: no space left on device","since":"2026-01-01T00:00:00Z"}` + "\n   "
	for name, record := range map[string]string{
		"degraded": degraded,
		"fine":     `{"state":"running","since":"2026-01-01T00:00:00Z"}`,
		"stopped":  degraded, // left by a supervisor that has stopped: not read
	} {
		if err := os.WriteFile(clusterdir.For(p.Home, name).HealthFile(), []byte(record), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"degraded", "fine", "stale"} { // stale: no record (an older kubesim's supervisor)
		holdSupervisorLock(t, clusterdir.For(p.Home, name))
	}
	infos, err := p.List()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{
		"degraded": {StatusDegraded, "etcd: cannot write its log: no space left on device"},
		"fine":     {StatusRunning, ""},
		"stale":    {StatusRunning, ""},
		"stopped":  {StatusStopped, ""},
	}
	for _, i := range infos {
		if got := [2]string{i.Status, i.Cause}; got != want[i.Name] {
			t.Errorf("%s: %q; want %q", i.Name, got, want[i.Name])
		}
		if i.Running != (i.Name != "stopped") {
			t.Errorf("%s: running %v", i.Name, i.Running)
		}
	}
	if len(infos) != len(want) {
		t.Errorf("listed %d clusters; want %d", len(infos), len(want))
	}
}
