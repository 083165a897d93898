package cluster

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

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/controlplane"
)

// stopTimeout bounds a clean stop; after it, what is left is killed.
const stopTimeout = 60 * time.Second

// Start starts a stopped cluster and waits until it is ready.
func (p *Provider) Start(ctx context.Context, name string, wait time.Duration) error {
	d, c, err := p.open(name)
	if err != nil {
		return err
	}
	if d.Running() {
		p.logf("Cluster %q is already running", name)
		return nil
	}
	if err := checkExplicitPort(c); err != nil {
		return err
	}
	p.logf("Starting cluster %q ...", name)
	started := time.Now()
	if err := p.startAndWait(ctx, d, wait); err != nil {
		return err
	}
	if err := p.useContext(d); err != nil {
		return err
	}
	p.logf("Cluster %q is ready (%.1fs)", name, time.Since(started).Seconds())
	return nil
}

// Stop stops a running cluster's processes; its data stays.
func (p *Provider) Stop(ctx context.Context, name string) error {
	d, _, err := p.open(name)
	if err != nil {
		return err
	}
	if !d.Running() {
		p.logf("Cluster %q is already stopped", name)
		return nil
	}
	if err := stopSupervisor(ctx, d); err != nil {
		return err
	}
	p.logf("Cluster %q stopped", name)
	return nil
}

// Delete stops a cluster, removes its files and its kubeconfig context.
func (p *Provider) Delete(ctx context.Context, name string) error {
	if err := v1alpha1.ValidateName(name); err != nil {
		return err
	}
	d := clusterdir.For(p.Home, name)
	if _, err := os.Stat(d.Path); err != nil {
		return fmt.Errorf("cluster %q does not exist (kubesim get clusters lists them)", name)
	}
	if d.Running() {
		if err := stopSupervisor(ctx, d); err != nil {
			return err
		}
	}
	if err := p.removeContext(name); err != nil {
		return err
	}
	if err := os.RemoveAll(d.Path); err != nil {
		return err
	}
	p.logf("Deleted cluster %q", name)
	return nil
}

// DeleteAll deletes every cluster.
func (p *Provider) DeleteAll(ctx context.Context) error {
	names, err := clusterdir.List(p.Home)
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range names {
		errs = append(errs, p.Delete(ctx, name))
	}
	return errors.Join(errs...)
}

// remove undoes a create that failed: stop whatever started, drop the files.
func (p *Provider) remove(d clusterdir.Dir) error {
	if d.Running() {
		if err := stopSupervisor(context.Background(), d); err != nil {
			return err
		}
	}
	return os.RemoveAll(d.Path)
}

// startAndWait launches the cluster's supervisor, detached from this
// process, and waits until the cluster can serve a user.
func (p *Provider) startAndWait(ctx context.Context, d clusterdir.Dir, wait time.Duration) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	logFile, err := os.OpenFile(d.Log("supervisor"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logFile.Close()
	cmd := exec.Command(exe, "component", "supervisor", "--home", p.Home, "--name", d.Name)
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
		err := ready(ctx, d)
		if err == nil {
			return nil
		}
		select {
		case exitErr := <-exited:
			return fmt.Errorf("cluster %q failed to start: supervisor exited (%v); see %s", d.Name, exitErr, d.Log("supervisor"))
		case <-ctx.Done():
			_ = stopSupervisor(context.Background(), d)
			return fmt.Errorf("cluster %q was not ready within %s (last check: %v); see the logs in %s", d.Name, wait, err, d.Logs())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ready reports whether a user can work with the cluster: the API server is
// ready, every component started, and the default ServiceAccount, without which no Pod can be
// created, exists. The controller-manager makes it too, but only after
// setting up all its controllers, seconds later: making it here (as that
// controller would) lets a user create pods the moment create returns.
func ready(ctx context.Context, d clusterdir.Dir) error {
	c, err := d.Load() // re-read: the supervisor may have moved a port
	if err != nil {
		return err
	}
	if err := controlplane.APIServerReady(ctx, d, c); err != nil {
		return err
	}
	if _, err := os.Stat(d.StartedFile()); err != nil {
		return errors.New("waiting for the supervisor to start every component")
	}
	client, err := controlplane.AdminClient(d, 2*time.Second)
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

// stopSupervisor asks the supervisor to stop the cluster and waits until
// it and every component are gone, killing what outstays stopTimeout.
func stopSupervisor(ctx context.Context, d clusterdir.Dir) error {
	pid, err := readPID(d)
	if err != nil {
		return fmt.Errorf("cluster %q is running but its supervisor's pid is unknown: %w", d.Name, err)
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	deadline := time.Now().Add(stopTimeout)
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
