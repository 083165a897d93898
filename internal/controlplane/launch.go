package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesim/kubesim/internal/clusterdir"
)

// The supervisor protocol, as seen from the commands that start and stop
// a cluster, and the lock, PID and started files it is built on.

// stopWait bounds a clean stop; after it, what is left is killed.
const stopWait = 60 * time.Second

// Launch starts the cluster's supervisor, detached from this process, and
// waits until the cluster can serve a user (Ready). If it does not within
// wait, what was started is stopped again.
func Launch(ctx context.Context, home string, d clusterdir.Dir, wait time.Duration) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	logFile, err := os.OpenFile(d.Log(Supervisor), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logFile.Close()
	opts := &SupervisorOptions{Home: home, Name: d.Name}
	cmd := exec.Command(exe, append([]string{"component", Supervisor}, Args(opts)...)...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own session: the cluster outlives this command and the terminal.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
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
			return fmt.Errorf("cluster %q failed to start: supervisor exited (%v); see %s", d.Name, exitErr, d.Log(Supervisor))
		case <-ctx.Done():
			_ = Stop(context.Background(), d)
			return fmt.Errorf("cluster %q was not ready within %s (last check: %v); see the logs in %s", d.Name, wait, err, d.Logs())
		case <-time.After(100 * time.Millisecond):
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
	if err := APIServerReady(ctx, d, c); err != nil {
		return err
	}
	if _, err := os.Stat(d.StartedFile()); err != nil {
		return errors.New("waiting for the supervisor to start every component")
	}
	client, err := AdminClient(d, 2*time.Second)
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
// it and every component are gone, killing what outstays stopWait.
func Stop(ctx context.Context, d clusterdir.Dir) error {
	pid, err := readPID(d)
	if err != nil {
		return fmt.Errorf("cluster %q is running but its supervisor's pid is unknown: %w", d.Name, err)
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	deadline := time.Now().Add(stopWait)
	// The supervisor leads its own process group, which its components share.
	for processGroupAlive(pid) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			deadline = time.Now().Add(time.Hour)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// Running reports whether the cluster's supervisor is alive: whether
// something holds its lock.
func Running(d clusterdir.Dir) bool {
	release, err := lock(d)
	if err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK)
	}
	release()
	return false
}

// lock takes the supervisor lock without waiting. It returns a release
// function, or an error if another process (a running supervisor) holds
// it. The kernel drops the lock when its holder dies, so a crash never
// leaves a cluster looking alive.
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
// `Running` check that holds it for a moment — and writes the PID file.
// Its release removes the PID and started files and drops the lock.
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
	if err := os.WriteFile(d.PIDFile(), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		unlock()
		return nil, err
	}
	return func() {
		os.Remove(d.StartedFile())
		os.Remove(d.PIDFile())
		unlock()
	}, nil
}

// markStarted tells Ready that every component has been started.
func markStarted(d clusterdir.Dir) error { return os.WriteFile(d.StartedFile(), nil, 0o600) }

func readPID(d clusterdir.Dir) (int, error) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		// A supervisor that has just taken its lock may not have written it yet.
		data, err := os.ReadFile(d.PIDFile())
		if err == nil {
			return strconv.Atoi(strings.TrimSpace(string(data)))
		}
		if time.Now().After(deadline) {
			return 0, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// processGroupAlive reports whether any process of group pgid is left
// (zombies included, until reaped by init).
func processGroupAlive(pgid int) bool {
	return syscall.Kill(-pgid, 0) == nil
}
