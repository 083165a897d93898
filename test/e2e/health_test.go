//go:build e2e

package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// clusterStatus is a cluster's status and cause as `get clusters -o json`
// shows them.
func (e *env) clusterStatus(name string) (status, cause string) {
	e.t.Helper()
	var infos []struct{ Name, Status, Cause string }
	if err := json.Unmarshal([]byte(e.must("get", "clusters", "-o", "json").stdout), &infos); err != nil {
		e.t.Fatal(err)
	}
	for _, i := range infos {
		if i.Name == name {
			return i.Status, i.Cause
		}
	}
	e.t.Fatalf("get clusters does not list %s", name)
	return "", ""
}

// statusIs is a condition for eventually: the cluster's status is want,
// with a cause that says each of causeSays.
func (e *env) statusIs(name, want string, causeSays ...string) func() error {
	return func() error {
		status, cause := e.clusterStatus(name)
		if status != want {
			return fmt.Errorf("status %s (%s)", status, cause)
		}
		for _, s := range causeSays {
			if !strings.Contains(cause, s) {
				return fmt.Errorf("cause %q does not say %q", cause, s)
			}
		}
		return nil
	}
}

// TestDegraded: a component whose log cannot be written (a full disk:
// here its log is /dev/full) keeps running, and get clusters says the
// cluster is degraded and why until the log can be written again; so does
// a component that crashed and is restarting, until it has run a while.
func TestDegraded(t *testing.T) {
	e := newEnv(t)
	e.createCluster("full", "--nodes", "1")
	if status, cause := e.clusterStatus("full"); status != "running" || cause != "" {
		t.Fatalf("after create: %s (%s)", status, cause)
	}

	e.must("stop", "cluster", "--name", "full")
	log := filepath.Join(e.clusterDir("full"), "logs", "kube-scheduler.log")
	if err := os.Remove(log); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/full", log); err != nil {
		t.Fatal(err)
	}
	e.must("start", "cluster", "--name", "full")
	eventually(t, 30*time.Second, "degraded by the scheduler's log", e.statusIs("full", "degraded", "kube-scheduler", "no space left on device"))
	table := e.must("get", "clusters").stdout
	if !strings.Contains(table, "degraded (kube-scheduler: cannot write its log: no space left on device)") {
		t.Errorf("get clusters:\n%s", table)
	}
	// It does not die of it.
	scheduler := e.componentPID("full", "kube-scheduler")
	e.must("kubectl", "create", "deployment", "web", "--image", "nginx", "--replicas", "2")
	e.must("kubectl", "rollout", "status", "deployment/web", "--timeout", "60s")
	if now := e.componentPID("full", "kube-scheduler"); scheduler == 0 || now != scheduler {
		t.Errorf("kube-scheduler was pid %d, is %d: it died with its log", scheduler, now)
	}

	if err := os.Remove(log); err != nil { // the disk has room again
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "running once the log can be written", e.statusIs("full", "running"))
	if data, err := os.ReadFile(log); err != nil || !strings.Contains(string(data), "bytes of its output were lost") {
		t.Errorf("the scheduler's log does not say what was lost: %q, %v", data, err)
	}

	// A crash: degraded while it restarts, running once it has run a while.
	if err := syscall.Kill(e.componentPID("full", "kube-scheduler"), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "degraded by the crash", e.statusIs("full", "degraded", "kube-scheduler: exited (signal: killed); restarting"))
	eventually(t, 60*time.Second, "running once it has run a while", func() error {
		if e.componentPID("full", "kube-scheduler") == 0 {
			return errors.New("no kube-scheduler")
		}
		return e.statusIs("full", "running")()
	})
}
