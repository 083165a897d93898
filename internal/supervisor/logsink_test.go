package supervisor

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gopkg.in/natefinch/lumberjack.v2"
)

// flakyLog is a log that fails while full is set, as a full disk does.
type flakyLog struct {
	mu     sync.Mutex
	full   bool
	buf    bytes.Buffer
	closes int
}

var errFull = &fs.PathError{Op: "write", Path: "/x/etcd.log", Err: syscall.ENOSPC}

func (l *flakyLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.full {
		return 0, errFull
	}
	return l.buf.Write(p)
}

func (l *flakyLog) Close() error { l.mu.Lock(); defer l.mu.Unlock(); l.closes++; return nil }

func (l *flakyLog) set(full bool) { l.mu.Lock(); defer l.mu.Unlock(); l.full = full }

func (l *flakyLog) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.buf.String() }

// reports records what a sink reports.
type reports struct {
	mu   sync.Mutex
	errs []error
}

func (r *reports) report(err error) { r.mu.Lock(); defer r.mu.Unlock(); r.errs = append(r.errs, err) }

func (r *reports) get() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.errs...)
}

func TestLogSinkDropsWhileFailingAndSaysWhatWasLost(t *testing.T) {
	log := &flakyLog{}
	var rep reports
	s := newLogSink("etcd", log, rep.report)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return now }
	s.retryEvery = time.Hour // no retries of its own here
	defer s.Close()

	write := func(p string) {
		t.Helper()
		if n, err := s.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("Write(%q) = %d, %v; want %d, nil", p, n, err, len(p))
		}
	}
	write("one\n")
	log.set(true)
	write("two\n")   // fails: dropped
	write("three\n") // too soon to retry: dropped
	if got := rep.get(); len(got) != 1 || !errors.Is(got[0], syscall.ENOSPC) {
		t.Fatalf("reported %v; want the one ENOSPC", got)
	}
	if log.closes != 1 {
		t.Errorf("log closed %d times; want once, to be opened afresh", log.closes)
	}
	now = now.Add(2 * time.Hour)
	write("four\n") // retried, still failing: dropped
	log.set(false)
	write("five\n") // too soon again
	now = now.Add(2 * time.Hour)
	write("six\n")

	want := "one\nkubesim: etcd's log could not be written for 4h0m0s (no space left on device): 20 bytes of its output were lost\nsix\n"
	if got := log.String(); got != want {
		t.Errorf("log:\n%s\nwant\n%s", got, want)
	}
	if got := rep.get(); len(got) != 2 || got[1] != nil {
		t.Errorf("reported %v; want ENOSPC, then nil", got)
	}
}

func TestLogSinkRecoversWithoutOutput(t *testing.T) {
	log := &flakyLog{}
	var rep reports
	s := newLogSink("kube-scheduler", log, rep.report)
	s.retryEvery = 10 * time.Millisecond
	defer s.Close()
	log.set(true)
	_, _ = s.Write([]byte("lost\n"))
	log.set(false)
	deadline := time.Now().Add(5 * time.Second)
	for len(rep.get()) < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := rep.get(); len(got) != 2 || got[1] != nil {
		t.Fatalf("reported %v; want ENOSPC, then nil with no more output", got)
	}
	if !strings.Contains(log.String(), "5 bytes of its output were lost") {
		t.Errorf("log: %q", log.String())
	}
}

// TestComponentOutlivesItsLog runs a chatty child whose log is /dev/full,
// as the supervisor runs a component: it must not die of it (with a plain
// writer the pipe's reader stops and it gets SIGPIPE). Once the log is a
// file again, the loss is written there.
func TestComponentOutlivesItsLog(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "chatty.log")
	if err := os.Symlink("/dev/full", path); err != nil {
		t.Fatal(err)
	}
	var rep reports
	s := newLogSink("chatty", &lumberjack.Logger{Filename: path, MaxSize: 1}, rep.report)
	s.retryEvery = time.Hour
	cmd := exec.Command("sh", "-c", `i=0; while [ $i -lt 2000 ]; do echo "line $i" || exit 3; i=$((i+1)); done`)
	cmd.Stdout, cmd.Stderr = s, s
	if err := cmd.Run(); err != nil {
		t.Fatalf("the child died of its log: %v", err)
	}
	if got := rep.get(); len(got) != 1 || !errors.Is(got[0], syscall.ENOSPC) {
		t.Fatalf("reported %v; want ENOSPC", got)
	}
	if err := os.Remove(path); err != nil { // the disk has room again
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(data), "bytes of its output were lost") {
		t.Errorf("log after recovery: %q, %v", data, err)
	}
	if got := rep.get(); len(got) != 2 || got[1] != nil {
		t.Errorf("reported %v; want ENOSPC, then nil", got)
	}
}

// A process killed mid-line leaves its last line open: the sink ends it,
// so the next process's first line starts a line of its own (issue 47
// found one torn line after a restart).
func TestLogSinkEndsAnOpenLineOnClose(t *testing.T) {
	log := &flakyLog{}
	first := newLogSink("etcd", log, nil)
	first.Write([]byte("I1127 complete line\nI1127 cut short by kill -"))
	first.Close()
	second := newLogSink("etcd", log, nil)
	second.Write([]byte("I1127 started again\n"))
	second.Close()
	want := "I1127 complete line\nI1127 cut short by kill -\nI1127 started again\n"
	if got := log.String(); got != want {
		t.Errorf("log:\n%q\nwant\n%q", got, want)
	}
}
