package supervisor

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubesim/kubesim/internal/clusterdir"
)

func newTestHealth(t *testing.T) (clusterdir.Dir, *healthRecord, *time.Time) {
	t.Helper()
	d := clusterdir.For(t.TempDir(), "c")
	if err := os.MkdirAll(d.Path, 0o700); err != nil {
		t.Fatal(err)
	}
	h := newHealthRecord(d, []string{"etcd", "kube-scheduler", Name})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h.now = func() time.Time { return now }
	return d, h, &now
}

func readHealth(t *testing.T, d clusterdir.Dir) Health {
	t.Helper()
	got, err := ReadHealth(d)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestHealthRecordsProblemsAndTheirEnd(t *testing.T) {
	d, h, now := newTestHealth(t)
	if got := readHealth(t, d); got.State != StateRunning {
		t.Errorf("no record: %+v; want running", got)
	}
	h.set("etcd", problemLog, "early") // before the supervisor holds the cluster: not written
	if _, err := os.Stat(d.HealthFile()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("written before begin: %v", err)
	}
	h.set("etcd", problemLog, "")
	if err := h.begin(); err != nil {
		t.Fatal(err)
	}
	start := *now
	if got := readHealth(t, d); got.State != StateRunning || got.Cause != "" || !got.Since.Equal(start) {
		t.Errorf("at start: %+v", got)
	}
	info, err := os.Stat(d.HealthFile())
	if err != nil || info.Mode().Perm() != 0o600 || info.Size() != healthSize {
		t.Errorf("record: %v, %v; want mode 0600, %d bytes", info, err, healthSize)
	}

	*now = now.Add(time.Minute)
	h.set("kube-scheduler", problemCrash, crashProblem(3, errors.New("exit status 1")))
	degradedAt := *now
	*now = now.Add(time.Minute)
	h.logProblem("etcd")(&os.PathError{Op: "write", Path: "/x", Err: syscall.ENOSPC})
	want := Health{State: StateDegraded, Since: degradedAt,
		Cause: "etcd: cannot write its log: no space left on device; kube-scheduler: exited 3 times (last: exit status 1); restarting"}
	if got := readHealth(t, d); got != want {
		t.Errorf("degraded:\n%+v\nwant\n%+v", got, want)
	}
	h.logProblem("etcd")(nil)
	*now = now.Add(time.Minute)
	h.set("kube-scheduler", problemCrash, "")
	if got := readHealth(t, d); got.State != StateRunning || got.Cause != "" || !got.Since.Equal(*now) {
		t.Errorf("recovered: %+v", got)
	}
}

// TestHealthWrittenOnAFullDisk: where no new file can be made (the
// temporary file of an atomic write), the record is overwritten in place.
func TestHealthWrittenOnAFullDisk(t *testing.T) {
	d, h, _ := newTestHealth(t)
	if err := h.begin(); err != nil {
		t.Fatal(err)
	}
	// A directory that cannot be removed where the temporary file goes.
	if err := os.MkdirAll(filepath.Join(d.HealthFile()+".tmp", "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	h.set("etcd", problemCrash, strings.Repeat("long ", 500))
	got := readHealth(t, d)
	if got.State != StateDegraded || !strings.HasPrefix(got.Cause, "etcd: long long") || !strings.HasSuffix(got.Cause, "…") {
		t.Errorf("in place: %+v", got)
	}
	h.set("etcd", problemCrash, "")
	if got := readHealth(t, d); got.State != StateRunning {
		t.Errorf("in place, shorter over longer: %+v", got)
	}
}

func TestCrashProblem(t *testing.T) {
	for exits, want := range map[int]string{
		1: "exited (exit status 2); restarting",
		4: "exited 4 times (last: exit status 2); restarting",
	} {
		if got := crashProblem(exits, errors.New("exit status 2")); got != want {
			t.Errorf("crashProblem(%d) = %q; want %q", exits, got, want)
		}
	}
}
