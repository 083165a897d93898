// Package e2e drives the kubesim binary as a user would, against real
// control planes it starts, and checks what a user would see.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// binary is the kubesim under test, built once per run.
var binary string

func TestMain(m *testing.M) {
	binary = os.Getenv("KUBESIM_BINARY")
	if binary == "" {
		// Built the way users build it, so versions are stamped.
		root, _ := filepath.Abs("../..")
		cmd := exec.Command("make", "-C", root, "build")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building kubesim:", err)
			os.Exit(1)
		}
		binary = filepath.Join(root, "bin", "kubesim")
	}
	os.Exit(m.Run())
}

// env is one isolated user: their own kubesim home and kubeconfig.
type env struct {
	t          *testing.T
	home       string
	kubeconfig string
	// cluster is the one e.kubectl and e.apply talk to.
	cluster string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	e := &env{t: t, home: filepath.Join(dir, "kubesim"), kubeconfig: filepath.Join(dir, "kube", "config")}
	t.Cleanup(func() {
		if t.Failed() {
			e.dumpLogs()
		}
		e.run("delete", "cluster", "--all")
		if pids := e.processes(); len(pids) > 0 {
			t.Errorf("processes left behind after delete --all: %v", pids)
		}
	})
	return e
}

// result is what a kubesim command printed and how it exited.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
}

// run runs kubesim with args as this env's user.
func (e *env) run(args ...string) result {
	return e.runEnv(nil, args...)
}

func (e *env) runEnv(extraEnv []string, args ...string) result {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(os.Environ(), "KUBESIM_HOME="+e.home, "KUBECONFIG="+e.kubeconfig)
	cmd.Env = append(cmd.Env, extraEnv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if exitErr, ok := err.(*exec.ExitError); ok {
		code = exitErr.ExitCode()
	} else if err != nil {
		e.t.Fatalf("running kubesim %v: %v", args, err)
	}
	return result{stdout.String(), stderr.String(), code}
}

// must runs kubesim and fails the test unless it exits 0.
func (e *env) must(args ...string) result {
	e.t.Helper()
	r := e.run(args...)
	if r.code != 0 {
		e.t.Fatalf("kubesim %s failed: %s", strings.Join(args, " "), r)
	}
	return r
}

// fails runs kubesim, expecting a non-zero exit and a one-line error that
// contains want, with no Go panic or stack trace.
func (e *env) fails(want string, args ...string) result {
	e.t.Helper()
	r := e.run(args...)
	if r.code == 0 {
		e.t.Fatalf("kubesim %s succeeded; want an error containing %q: %s", strings.Join(args, " "), want, r)
	}
	if !strings.Contains(r.stderr, want) {
		e.t.Fatalf("kubesim %s: error does not mention %q: %s", strings.Join(args, " "), want, r)
	}
	if strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "goroutine ") {
		e.t.Fatalf("kubesim %s: panicked: %s", strings.Join(args, " "), r)
	}
	if lines := strings.Count(strings.TrimSpace(r.stderr), "\n") + 1; lines > 1 {
		e.t.Errorf("kubesim %s: error spans %d lines, want one: %s", strings.Join(args, " "), lines, r.stderr)
	}
	return r
}

// client is a client-go clientset for the user's current context.
func (e *env) client() *kubernetes.Clientset {
	e.t.Helper()
	return clientsetFor(e.t, mustConfig(e.t, e.kubeconfig))
}

func mustConfig(t *testing.T, kubeconfig string) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatalf("loading %s: %v", kubeconfig, err)
	}
	return cfg
}

func clientsetFor(t *testing.T, cfg *rest.Config) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// clusterDir is where kubesim keeps a cluster's files.
func (e *env) clusterDir(name string) string { return filepath.Join(e.home, "clusters", name) }

// processes lists the pids of processes started for this env's clusters:
// each one names a path under its home on its command line.
func (e *env) processes() []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, entry := range entries {
		pid, err := strconv.Atoi(entry.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", entry.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte(e.home)) && !isZombie(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// componentPID returns the pid of a cluster's running component, or 0.
func (e *env) componentPID(cluster, component string) int {
	for _, pid := range e.processes() {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		args := strings.Split(string(cmdline), "\x00")
		if len(args) > 2 && args[1] == "component" && args[2] == component &&
			strings.Contains(string(cmdline), e.clusterDir(cluster)+"/") {
			return pid
		}
	}
	return 0
}

func isZombie(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(fields) > 0 && fields[0] == "Z"
}

// eventually polls cond until it returns nil or the deadline passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not true after %s: %v", what, timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (e *env) dumpLogs() {
	matches, _ := filepath.Glob(filepath.Join(e.home, "clusters", "*", "logs", "*.log"))
	for _, m := range matches {
		if strings.HasSuffix(m, "audit.log") {
			continue
		}
		data, _ := os.ReadFile(m)
		if len(data) > 4000 {
			data = data[len(data)-4000:]
		}
		e.t.Logf("--- %s (tail)\n%s", m, data)
	}
}
