package supervisor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubesim/kubesim/internal/clusterdir"
)

// The test binary doubles as a fake supervisor: run as `component
// supervisor --name=N` with fakeSupervisorEnv set, it takes the lock file
// named there and waits — for SIGTERM ("term") or forever ("ignore").
const fakeSupervisorEnv = "KUBESIM_TEST_FAKE_SUPERVISOR"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeSupervisorEnv); mode != "" {
		fakeSupervisor(mode)
	}
	os.Exit(m.Run())
}

func fakeSupervisor(mode string) {
	if lockFile := os.Getenv("KUBESIM_TEST_LOCK"); lockFile != "" {
		f, err := os.OpenFile(lockFile, os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil || syscall.Flock(int(f.Fd()), syscall.LOCK_EX) != nil {
			os.Exit(3)
		}
	}
	if mode == "ignore" {
		signal.Ignore(syscall.SIGTERM)
	} else {
		signal.Notify(make(chan os.Signal, 1), syscall.SIGTERM) // below, default: exit
		signal.Reset(syscall.SIGTERM)
	}
	fmt.Println("ready")
	select {}
}

// startFake starts a fake supervisor of the cluster name in a process
// group of its own, holding d's lock if lock is set, and writes d's PID
// file naming it. It is not reaped until the test ends, so once it exits
// it is a zombie, as under an init that never reaps.
func startFake(t *testing.T, d clusterdir.Dir, name, mode string, lock bool) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "component", Name, "--home=/nowhere", "--name="+name)
	cmd.Env = append(os.Environ(), fakeSupervisorEnv+"="+mode)
	if lock {
		cmd.Env = append(cmd.Env, "KUBESIM_TEST_LOCK="+d.LockFile())
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
	buf := make([]byte, 6)
	if n, _ := out.Read(buf); string(buf[:n]) != "ready\n" {
		t.Fatalf("fake supervisor did not start: %q", buf[:n])
	}
	st, err := readProcStat(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	writePIDFile(t, d, pidRecord{pid: cmd.Process.Pid, start: st.start}.String())
	return cmd
}

func writePIDFile(t *testing.T, d clusterdir.Dir, content string) {
	t.Helper()
	if err := os.WriteFile(d.PIDFile(), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func tempCluster(t *testing.T, name string) clusterdir.Dir {
	t.Helper()
	d := clusterdir.For(t.TempDir(), name)
	if err := os.MkdirAll(d.Path, 0o700); err != nil {
		t.Fatal(err)
	}
	return d
}

// stopWithin runs Stop and fails the test if it takes longer than limit.
func stopWithin(t *testing.T, ctx context.Context, d clusterdir.Dir, limit time.Duration) (string, error) {
	t.Helper()
	var said strings.Builder
	start := time.Now()
	err := Stop(ctx, d, func(format string, args ...any) { fmt.Fprintf(&said, format+"\n", args...) })
	if took := time.Since(start); took > limit {
		t.Errorf("Stop took %s, want at most %s", took, limit)
	}
	return said.String(), err
}

// A supervisor that exits on SIGTERM but is never reaped stays a zombie:
// Stop must not wait on it forever.
func TestStopEndsThoughTheSupervisorIsNeverReaped(t *testing.T) {
	d := tempCluster(t, "blue")
	sup := startFake(t, d, "blue", "term", true)
	if _, err := stopWithin(t, context.Background(), d, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if !zombie(sup.Process.Pid) {
		t.Fatal("the fake supervisor did not stay a zombie; the test proves nothing")
	}
	if _, err := os.Stat(d.PIDFile()); !os.IsNotExist(err) {
		t.Errorf("PID file left behind: %v", err)
	}
}

// A supervisor found a zombie already (under an init that never reaps, a
// CI container's `sleep infinity`): the cluster is stopped, and Stop says
// so.
func TestStopFindingAZombieSupervisorSaysSo(t *testing.T) {
	d := tempCluster(t, "blue")
	sup := startFake(t, d, "blue", "term", true)
	if err := syscall.Kill(sup.Process.Pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// It is this test's child: nothing else can reap it.
	for deadline := time.Now().Add(10 * time.Second); !zombie(sup.Process.Pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the fake supervisor did not exit on SIGTERM")
		}
	}
	said, err := stopWithin(t, context.Background(), d, 10*time.Second)
	if err != nil || !strings.Contains(said, "zombie") {
		t.Errorf("Stop said %q (%v), want it to tell of the zombie", said, err)
	}
	if _, err := os.Stat(d.PIDFile()); !os.IsNotExist(err) {
		t.Errorf("PID file left behind: %v", err)
	}
}

// Interrupted (ctx ended), Stop kills a supervisor that ignores SIGTERM at
// once and returns within a bounded time.
func TestStopKillsAtOnceWhenInterrupted(t *testing.T) {
	d := tempCluster(t, "blue")
	sup := startFake(t, d, "blue", "ignore", true)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := stopWithin(t, ctx, d, killWait+2*time.Second); err != nil {
		t.Fatal(err)
	}
	if alive := groupAlive(sup.Process.Pid); len(alive) > 0 {
		t.Errorf("processes %v outlived the kill", alive)
	}
}

// A PID file naming a process that is not this cluster's supervisor — a
// reused PID, another cluster's, or 0/-1/1 — gets nothing signalled.
func TestStopNeverSignalsAProcessNotProvenOurs(t *testing.T) {
	d := tempCluster(t, "blue")
	stranger := startFake(t, d, "red", "term", false) // writes the PID file
	for _, content := range []string{"", "0", "-1", "1", "garbage", fmt.Sprintf("%d 12345", stranger.Process.Pid)} {
		if content != "" {
			writePIDFile(t, d, content)
		}
		if _, err := stopWithin(t, context.Background(), d, 10*time.Second); err != nil {
			t.Errorf("PID file %q, nothing running: %v", content, err)
		}
		if zombie(stranger.Process.Pid) || len(groupAlive(stranger.Process.Pid)) == 0 {
			t.Fatalf("PID file %q: the stranger (pid %d) was signalled", content, stranger.Process.Pid)
		}
	}
	// Even while something holds the lock, a stranger is not signalled.
	release, err := lock(d)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	writePIDFile(t, d, fmt.Sprint(stranger.Process.Pid))
	if _, err := stopWithin(t, context.Background(), d, 10*time.Second); err == nil || !strings.Contains(err.Error(), "nothing was signalled") {
		t.Errorf("lock held, PID file naming a stranger: %v", err)
	}
	if len(groupAlive(stranger.Process.Pid)) == 0 {
		t.Error("the stranger was signalled")
	}
}

// Probes take the lock shared: two at once never see each other as a
// supervisor; the supervisor's exclusive lock is seen.
func TestRunningIsNotFooledByAConcurrentProbe(t *testing.T) {
	d := tempCluster(t, "blue")
	probe, err := os.OpenFile(d.LockFile(), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(probe.Fd()), syscall.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	if Running(d) {
		t.Error("a concurrent probe looks like a running supervisor")
	}
	probe.Close()
	release, err := lock(d)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if !Running(d) {
		t.Error("a held supervisor lock is not seen")
	}
}

func TestParsePIDRecord(t *testing.T) {
	for in, want := range map[string]string{"4242 987": "4242 987", "4242\n": "4242 0"} {
		r, err := parsePIDRecord([]byte(in))
		if err != nil || r.String() != want {
			t.Errorf("%q: %v, %v; want %s", in, r, err, want)
		}
	}
	for _, bad := range []string{"", "0", "-1", "1", "x", "12 x", "1 2 3"} {
		if _, err := parsePIDRecord([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
