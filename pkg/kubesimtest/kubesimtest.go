// Package kubesimtest starts a simulated Kubernetes cluster for a Go test:
// a real control plane (etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler) with simulated kubelets, so a controller under test sees
// pods scheduled and Running, garbage collection, namespace deletion and
// node failures, as in a real cluster.
//
//	func TestScalesOut(t *testing.T) {
//		c := kubesimtest.Start(t, kubesimtest.Nodes(3, kubesimtest.Label("topology.kubernetes.io/zone", "a")))
//		cs := kubernetes.NewForConfigOrDie(c.Config())
//		// … the cluster is deleted when the test ends
//	}
//
// It drives the kubesim binary named by $KUBESIM_BINARY, else kubesim on
// $PATH. Each cluster has its own KUBESIM_HOME and kubeconfig in a
// temporary directory; the user's ~/.kube/config is never read or written.
// The package imports client-go, apimachinery and kubesim's API types
// (github.com/kubesim/kubesim/apis) only.
package kubesimtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Cluster is a running simulated cluster. Its methods fail the test they
// were handed (t.Fatal) on error, so call them from the test's goroutine.
type Cluster struct {
	t          testing.TB
	bin        string
	name       string
	home       string // KUBESIM_HOME, this cluster's alone
	kubeconfig string // holds only this cluster's context, current
	config     *rest.Config
	startup    time.Duration
}

// startTimeout bounds `kubesim create cluster` (and with it the wait for
// its nodes); a test's own deadline (go test -timeout) bounds it further.
const startTimeout = 3 * time.Minute

// Start creates a cluster with the options and waits until it is ready
// (its Stages made with it, nodes Ready). t.Cleanup deletes it, after printing
// the tail of each component's log if the test failed.
func Start(t testing.TB, opts ...Option) *Cluster {
	t.Helper()
	dir, err := tempDir(t)
	if err != nil {
		t.Fatalf("kubesimtest: %v", err)
	}
	timeout := startTimeout
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if deadline, set := d.Deadline(); set {
			// Leave the test time to clean up rather than be killed by go
			// test; a deadline already near still gets a try.
			timeout = max(10*time.Second, min(timeout, time.Until(deadline)*9/10))
		}
	}
	c, err := start(dir, t.Name(), timeout, opts)
	if c != nil {
		c.t = t
		live.Store(c, struct{}{})
		t.Cleanup(func() {
			if _, err := os.Stat(c.dir()); t.Failed() && err == nil {
				c.printLogs(t.Logf)
			}
			if err := c.delete(); err != nil {
				t.Errorf("kubesimtest: %v", err)
			}
			live.Delete(c)
		})
	}
	if err != nil {
		t.Fatalf("kubesimtest: %v", err)
	}
	t.Logf("kubesimtest: cluster %s ready in %s", c.name, c.startup.Round(time.Millisecond))
	return c
}

// tempDir is a fresh directory removed after the test. It is not
// t.TempDir(): that path holds the test's name, and a long one would make
// the cluster's unix socket path longer than the 107 bytes Linux allows.
func tempDir(t testing.TB) (string, error) {
	dir, err := newDir()
	if err != nil {
		return "", err
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir, nil
}

// start creates the cluster in dir. A Cluster is returned with an error if
// kubesim was run, so the caller deletes what it may have left.
func start(dir, testName string, timeout time.Duration, opts []Option) (*Cluster, error) {
	s := &settings{}
	for _, opt := range opts {
		if err := opt(s); err != nil {
			return nil, err
		}
	}
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	if err := checkBinary(bin); err != nil {
		return nil, err
	}
	name := clusterName(testName)
	config, err := writeConfig(dir, name, s)
	if err != nil {
		return nil, err
	}
	c := &Cluster{bin: bin, name: name, home: filepath.Join(dir, "home"), kubeconfig: filepath.Join(dir, "kubeconfig")}
	began := time.Now()
	// --retain keeps a cluster that failed to start, so its logs can be
	// printed; the caller's cleanup deletes it. kubesim's own --wait ends
	// before the process is killed, so it can say what it waited for.
	if _, err := c.run(timeout+30*time.Second, "create", "cluster", "--config", config, "--retain", "--wait", timeout.String(),
		"--owner-pid", strconv.Itoa(os.Getpid())); err != nil {
		return c, err
	}
	if c.config, err = clientcmd.BuildConfigFromFlags("", c.kubeconfig); err != nil {
		return c, fmt.Errorf("reading the cluster's kubeconfig: %w", err)
	}
	// client-go's default of 5 requests/s would make tests wait on the
	// client rather than on the cluster.
	c.config.QPS, c.config.Burst = 200, 400
	if err := c.spread(s.groups); err != nil {
		return c, err
	}
	c.startup = time.Since(began)
	return c, nil
}

// spread gives node i of each group each of its Spread labels' value i
// (going round).
func (c *Cluster) spread(groups []*nodeGroup) error {
	if !slices.ContainsFunc(groups, func(g *nodeGroup) bool { return len(g.spread) > 0 }) {
		return nil
	}
	cs, err := kubernetes.NewForConfig(c.config)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, g := range groups {
		if len(g.spread) == 0 {
			continue
		}
		for i := range g.Count {
			values := map[string]string{}
			for _, l := range g.spread {
				values[l.key] = l.values[i%len(l.values)]
			}
			patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": values}})
			if err != nil {
				return err
			}
			name := g.NodeName(i)
			if _, err := cs.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				return fmt.Errorf("kubesimtest.Spread: labelling node %s: %w", name, err)
			}
		}
	}
	return nil
}

// clusterName is a DNS label made from the test's name, unique by a random
// suffix; short, as it is part of paths with a length limit.
func clusterName(testName string) string {
	base := strings.Trim(nonLabel.ReplaceAllString(strings.ToLower(testName), "-"), "-")
	base = strings.TrimPrefix(base, "test-")
	if len(base) > 20 {
		base = strings.TrimRight(base[:20], "-")
	}
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	if base == "" {
		return "kt-" + hex.EncodeToString(suffix)
	}
	return "kt-" + base + "-" + hex.EncodeToString(suffix)
}

var nonLabel = regexp.MustCompile(`[^a-z0-9]+`)

// run runs kubesim as this cluster's user and returns its stdout; an error
// carries kubesim's own one-line message.
func (c *Cluster) run(timeout time.Duration, args ...string) (string, error) {
	// Only this cluster's home and kubeconfig: nothing of the user's.
	env := append(os.Environ(), "KUBESIM_HOME="+c.home, "KUBECONFIG="+c.kubeconfig)
	out, err := runBinary(c.bin, env, timeout, args...)
	if err != nil {
		return out, fmt.Errorf("kubesim %s: %w", strings.Join(args[:min(2, len(args))], " "), err)
	}
	return out, nil
}

// Name is the cluster's name (its kubeconfig context is kubesim-<name>).
func (c *Cluster) Name() string { return c.name }

// Config is an admin's client configuration for the cluster, a copy the
// caller may change.
func (c *Cluster) Config() *rest.Config { return rest.CopyConfig(c.config) }

// Kubeconfig is the path of a kubeconfig file whose current context is
// the cluster's, as an admin: for tools and controllers that take a file.
func (c *Cluster) Kubeconfig() string { return c.kubeconfig }

// Nodes lists the names of the cluster's nodes, sorted.
func (c *Cluster) Nodes() []string {
	c.t.Helper()
	cs, err := kubernetes.NewForConfig(c.config)
	if err != nil {
		c.t.Fatalf("kubesimtest: %v", err)
	}
	list, err := cs.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		c.t.Fatalf("kubesimtest: listing nodes: %v", err)
	}
	var names []string
	for _, n := range list.Items {
		names = append(names, n.Name)
	}
	slices.Sort(names)
	return names
}

// StopNode stops a node's simulated kubelet: no more Lease renewals or
// status, so the node-lifecycle controller marks it NotReady and evicts its
// pods (see NodeFailure for how soon).
func (c *Cluster) StopNode(name string) {
	c.t.Helper()
	if _, err := c.run(time.Minute, "node", "stop", "--name", c.name, name); err != nil {
		c.t.Fatalf("kubesimtest: StopNode(%q): %v", name, err)
	}
}

// StartNode starts a stopped node's kubelet again: it reports Ready.
func (c *Cluster) StartNode(name string) {
	c.t.Helper()
	if _, err := c.run(time.Minute, "node", "start", "--name", c.name, name); err != nil {
		c.t.Fatalf("kubesimtest: StartNode(%q): %v", name, err)
	}
}

// Logs is the log of one component: etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler, kubelet-sim, supervisor, …
func (c *Cluster) Logs(component string) string {
	c.t.Helper()
	out, err := c.run(time.Minute, "logs", "--name", c.name, component)
	if err != nil {
		c.t.Fatalf("kubesimtest: Logs(%q): %v", component, err)
	}
	return out
}

// StartupTime is how long Start took from running `kubesim create
// cluster` to a ready cluster with its Stages applied.
func (c *Cluster) StartupTime() time.Duration { return c.startup }

// dir is the cluster's directory in its KUBESIM_HOME.
func (c *Cluster) dir() string { return filepath.Join(c.home, "clusters", c.name) }

// logTail is how many lines of each component's log a failed test shows.
const logTail = 30

// printLogs logs the tail of every component's log.
func (c *Cluster) printLogs(logf func(format string, args ...any)) {
	dir := filepath.Join(c.dir(), "logs")
	entries, err := os.ReadDir(dir)
	if err != nil {
		logf("kubesimtest: no logs of cluster %s: %v", c.name, err)
		return
	}
	for _, e := range entries {
		component := strings.TrimSuffix(e.Name(), ".log")
		if component == "audit" || e.IsDir() || !strings.HasSuffix(e.Name(), ".log") {
			continue // the audit log is every request, not a diagnosis
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		logf("kubesimtest: cluster %s, last %d lines of %s:\n%s", c.name, logTail, component, tail(string(data), logTail))
	}
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// delete deletes the cluster; kubesim stops every process of it first.
// A cluster kubesim refused to create is not there to delete.
func (c *Cluster) delete() error {
	if _, err := os.Stat(c.dir()); os.IsNotExist(err) {
		return nil
	}
	_, err := c.run(2*time.Minute, "delete", "cluster", "--name", c.name)
	return err
}
