package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesim/kubesim/internal/clusterclock"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/component"
	"github.com/kubesim/kubesim/internal/controlplane"
	"github.com/kubesim/kubesim/internal/credentials"
	"github.com/kubesim/kubesim/internal/execcopy"
)

// The supervisor protocol, as seen from the commands that start and stop
// a cluster, and the lock, PID and started files it is built on.

// stopWait bounds a clean stop; after it, what is left is killed, and
// killWait bounds the wait for the killed to go.
const (
	stopWait = 60 * time.Second
	killWait = 5 * time.Second
)

// keepNoInheritedFiles marks every descriptor above stderr close-on-exec,
// so that the detached cluster holds nothing this command inherited: the
// lock a wrapper such as flock(1) holds for the command's duration, the
// pipe a CI step waits on until it closes. Go's own are so already.
func keepNoInheritedFiles() {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}

// Launch starts the cluster's supervisor, detached from this process, and
// waits until the cluster can serve a user (Ready). If it does not within
// wait, what was started is stopped again.
func Launch(ctx context.Context, home string, d clusterdir.Dir, wait time.Duration) error {
	exe, err := execcopy.Executable()
	if err != nil {
		return err
	}
	if !Running(d) {
		clearProtocolFiles(d) // a stale started file would pass Ready at once
	}
	logFile, err := os.OpenFile(d.Log(Name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logFile.Close()
	opts := &Options{Home: home, Name: d.Name}
	// The supervisor too runs from a copy in small pages (execcopy): from
	// the binary itself it held ~75 MiB of it.
	run, err := execcopy.For(exe)
	if err != nil {
		fmt.Fprintf(logFile, "the supervisor runs from %s, not a copy of it in small pages: %v\n", exe, err)
	}
	cmd := exec.Command(run, append([]string{"component", Name}, component.Args(opts)...)...)
	cmd.Stdout, cmd.Stderr = logFile, logFile // a crash's last words; it logs itself
	cmd.Env = append(processEnv(gcPercent), execcopy.OriginalEnv+"="+exe)
	// Its own session: the cluster outlives this command and the terminal.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	keepNoInheritedFiles()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the supervisor: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		err := Ready(ctx, d)
		if err == nil {
			return nil
		}
		select {
		case exitErr := <-exited:
			if exitErr == nil { // it found another supervisor, or was stopped
				exitErr = errors.New("exit status 0")
			}
			return fmt.Errorf("cluster %q failed to start: supervisor exited (%v); see %s", d.Name, exitErr, d.Log(Name))
		case <-ctx.Done():
			_ = Stop(context.Background(), d, func(string, ...any) {})
			return fmt.Errorf("cluster %q was not ready within %s (last check: %v); see the logs in %s", d.Name, wait, err, d.Logs())
		case <-time.After(readyPoll):
		}
	}
}

// Ready reports whether a user can work with the cluster: the API server is
// ready, every component started, and the default ServiceAccount, without
// which no Pod can be created, exists. The controller-manager makes it too,
// but only after setting up all its controllers, seconds later: making it
// here (as that controller would) lets a user create pods the moment
// create returns.
func Ready(ctx context.Context, d clusterdir.Dir) error {
	c, err := d.Load() // re-read: the supervisor may have moved a port
	if err != nil {
		return err
	}
	// Cheap, so asked first: Launch asks often.
	if _, err := os.Stat(d.StartedFile()); err != nil {
		return errors.New("waiting for the supervisor to start every component")
	}
	if err := controlplane.APIServerReady(ctx, d, c); err != nil {
		return err
	}
	client, err := credentials.AdminClient(d, 2*time.Second)
	if err != nil {
		return err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: metav1.NamespaceDefault}}
	_, err = client.CoreV1().ServiceAccounts(sa.Namespace).Create(ctx, sa, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// Stop asks the cluster's supervisor to stop the cluster and waits until
// it and every component are gone: SIGTERM, then SIGKILL to the whole
// process group after stopWait — at once if ctx ends (a Ctrl-C) — and at
// most killWait more. It never signals a process it cannot prove to be this
// cluster's supervisor, treats a supervisor that exited but was never
// reaped (a zombie) as stopped, and tells logf what it found worth saying.
func Stop(ctx context.Context, d clusterdir.Dir, logf func(string, ...any)) error {
	return stop(ctx, d, logf, false)
}

// Kill is Stop without the grace: SIGKILL to the whole process group at
// once, for a cluster about to be deleted, whose state nobody will read.
func Kill(ctx context.Context, d clusterdir.Dir, logf func(string, ...any)) error {
	return stop(ctx, d, logf, true)
}

func stop(ctx context.Context, d clusterdir.Dir, logf func(string, ...any), kill bool) error {
	// Waits for processes to exit, real work: as long in real time when
	// the caller runs on a cluster's clock (kubesim run's, at 60×).
	stopWait, killWait := clusterclock.Stretch(stopWait), clusterclock.Stretch(killWait)
	rec, err := readPIDFile(d)
	if err == nil && !rec.isSupervisorOf(d) {
		err = fmt.Errorf("process %d is not its supervisor", rec.pid)
	}
	if err != nil {
		exited := rec.pid > 0 && zombie(rec.pid)
		if exited {
			// Its last threads may hold the lock a moment longer.
			for deadline := time.Now().Add(killWait); Running(d) && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
			}
		}
		if Running(d) {
			return fmt.Errorf("cluster %q is running but %s does not name its supervisor (%v); nothing was signalled", d.Name, d.PIDFile(), err)
		}
		if exited {
			logf("Cluster %q: its supervisor (pid %d) has exited but was never reaped (a zombie): treating it as stopped", d.Name, rec.pid)
		}
		clearProtocolFiles(d) // stale: left by a supervisor that was killed
		return nil
	}
	_ = syscall.Kill(rec.pid, syscall.SIGTERM)
	deadline, killed := time.Now().Add(stopWait), false
	if kill {
		deadline = time.Now()
	}
	// The supervisor leads its own process group, which its components
	// share; the group's id cannot be reused while any of them lives.
	for alive := groupAlive(rec.pid); len(alive) > 0; alive = groupAlive(rec.pid) {
		switch {
		case killed && time.Now().After(deadline):
			return fmt.Errorf("cluster %q: processes %v did not exit %s after SIGKILL", d.Name, alive, killWait)
		case !killed && (time.Now().After(deadline) || ctx.Err() != nil):
			_ = syscall.Kill(-rec.pid, syscall.SIGKILL)
			deadline, killed = time.Now().Add(killWait), true
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Its leader may linger a moment as a zombie until init reaps it: it
	// has exited, which is all a stop needs.
	clearProtocolFiles(d) // a killed supervisor leaves them
	return nil
}

// Running reports whether the cluster's supervisor is alive: whether it
// holds its lock. The probe takes the lock shared, so probes running at
// the same time (a `get clusters` beside a `stop`) never see each other as
// a supervisor.
func Running(d clusterdir.Dir) bool {
	f, err := os.OpenFile(d.LockFile(), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return false
	}
	defer f.Close()
	return errors.Is(syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB), syscall.EWOULDBLOCK)
}

// Died reports whether the cluster's supervisor died rather than stopped:
// it is not running, yet the PID file it removes when it stops is there.
func Died(d clusterdir.Dir) bool {
	_, err := os.Stat(d.PIDFile())
	return err == nil && !Running(d)
}

// lock takes the supervisor lock, exclusive, without waiting. It returns a
// release function, or an error if another process holds it. The kernel
// drops the lock when its holder dies, so a crash never leaves a cluster
// looking alive.
func lock(d clusterdir.Dir) (release func(), err error) {
	f, err := os.OpenFile(d.LockFile(), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// holdLock takes the lock for a supervisor — waiting a little, for a
// Running probe that holds it for a moment — and writes the PID file over
// any stale one. Its release removes the PID and started files and drops
// the lock.
func holdLock(d clusterdir.Dir) (func(), error) {
	deadline := time.Now().Add(5 * time.Second)
	unlock, err := lock(d)
	for err != nil {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("cluster %q already has a supervisor: %w", d.Name, err)
		}
		time.Sleep(50 * time.Millisecond)
		unlock, err = lock(d)
	}
	clearProtocolFiles(d)
	rec, err := ownPIDRecord()
	if err == nil {
		err = os.WriteFile(d.PIDFile(), []byte(rec.String()), 0o600)
	}
	if err != nil {
		unlock()
		return nil, err
	}
	return func() {
		clearProtocolFiles(d)
		unlock()
	}, nil
}

// clearProtocolFiles removes the PID and started files.
func clearProtocolFiles(d clusterdir.Dir) {
	os.Remove(d.StartedFile())
	os.Remove(d.PIDFile())
}

// markStarted tells Ready that every component has been started.
func markStarted(d clusterdir.Dir) error { return os.WriteFile(d.StartedFile(), nil, 0o600) }

// readPIDFile reads the supervisor's PID file, waiting a little for one
// that has just taken its lock and not yet written it.
func readPIDFile(d clusterdir.Dir) (pidRecord, error) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		data, err := os.ReadFile(d.PIDFile())
		if err == nil {
			return parsePIDRecord(data)
		}
		if time.Now().After(deadline) || !Running(d) {
			return pidRecord{}, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}
