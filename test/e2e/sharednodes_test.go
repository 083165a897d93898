//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/kubesim/kubesim/internal/kubeletsim"
)

// TestKubeletSimsShareNodes runs `kubesim kubelet-sim` processes, with the
// rights deploy/ grants, on a cluster without a simulator of its own: a
// second one joining takes its even share of the 200 nodes; the first,
// killed with -9, has all its nodes taken by the survivor well within the
// node-monitor grace period, and their pods are managed by it; a third
// joins and, stopped with SIGTERM, hands its nodes back at once. No node
// stops being Ready at any time.
func TestKubeletSimsShareNodes(t *testing.T) {
	const (
		nodes = 200
		grace = 20 * time.Second
	)
	e := newEnvAlone(t)
	ctx := context.Background()
	e.createCluster("shared", "--disable-kubelet-sim", "--node-monitor-grace-period", grace.String())
	e.kubectl("apply", "-k", filepath.Join("..", "..", "deploy"))
	client := e.client()
	kubeconfig := impersonating(t, filepath.Join(e.clusterDir("shared"), "kubeconfig"), "system:serviceaccount:kubesim-system:kubelet-sim")
	start := func(holder string) *exec.Cmd {
		// As a kubesim cluster runs its own: node Leases of the grace
		// period, renewed twice in it.
		sim := exec.Command(binary, "kubelet-sim", "--kubeconfig", kubeconfig, "--manage-all-nodes", "--holder", holder,
			"--node-lease-duration", grace.String(), "--node-lease-renew-interval", (grace / 2).String())
		sim.Stdout, sim.Stderr = os.Stderr, os.Stderr
		if err := sim.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sim.Process.Kill(); _ = sim.Wait() })
		return sim
	}
	start("sim-a")
	e.must("scale", "node", "--name", "shared", "--replicas", fmt.Sprint(nodes))
	notReady := watchNotReady(t, client)

	b := start("sim-b")
	var ofB []string
	eventually(t, 60*time.Second, "sim-b holding its share of the nodes", func() error {
		held := nodeLeaseHolders(t, client)
		ofB = held["sim-b"]
		if len(held["sim-a"])+len(ofB) != nodes {
			return fmt.Errorf("held: %d by sim-a, %d by sim-b, want all %d", len(held["sim-a"]), len(ofB), nodes)
		}
		// Hashing shares them: within 10 % of even for these names.
		if off := len(ofB) - nodes/2; off > nodes/20 || off < -nodes/20 {
			return fmt.Errorf("sim-b holds %d of %d", len(ofB), nodes)
		}
		return nil
	})
	// A pod on one of sim-b's nodes, Running by sim-b.
	p := testPod("on-b")
	p.Spec.NodeName = ofB[0]
	createPod(t, client, p)
	waitPhase(t, client, "on-b", corev1.PodRunning)

	if err := b.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	eventually(t, grace, "sim-a holding all nodes after sim-b's kill", func() error {
		if held := nodeLeaseHolders(t, client); len(held["sim-a"]) != nodes {
			return fmt.Errorf("sim-a holds %d of %d nodes", len(held["sim-a"]), nodes)
		}
		return nil
	})
	// A Lease renewed just before the kill lapses a grace after: every one
	// must be taken well before half of it has passed.
	if took := time.Since(killed); took > grace/2 {
		t.Errorf("sim-b's nodes taken %s after its kill, want well within %s", took.Round(time.Millisecond), grace/2)
	} else {
		t.Logf("sim-b's %d nodes taken %s after its kill", len(ofB), took.Round(time.Millisecond))
	}
	// Its pods are sim-a's now: a deleted one goes, a new one runs.
	if err := client.CoreV1().Pods("default").Delete(ctx, "on-b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, client, "on-b")
	p = testPod("on-b-again")
	p.Spec.NodeName = ofB[len(ofB)-1]
	createPod(t, client, p)
	waitPhase(t, client, "on-b-again", corev1.PodRunning)

	// A third joins, then stops: its nodes come back at once, not after its
	// announcement would have lapsed.
	c := start("sim-c")
	eventually(t, 60*time.Second, "sim-c holding nodes", func() error {
		if n := len(nodeLeaseHolders(t, client)["sim-c"]); n < nodes/4 {
			return fmt.Errorf("sim-c holds %d", n)
		}
		return nil
	})
	if err := c.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	eventually(t, grace, "sim-a holding all nodes after sim-c stopped", func() error {
		if held := nodeLeaseHolders(t, client); len(held["sim-a"]) != nodes {
			return fmt.Errorf("sim-a holds %d of %d nodes", len(held["sim-a"]), nodes)
		}
		return nil
	})
	if took := time.Since(stopped); took > 3*time.Second {
		t.Errorf("sim-c's nodes taken %s after it stopped, want at once", took.Round(time.Millisecond))
	}
	_ = c.Wait()

	// Past the grace period of the last Lease sim-b renewed, and of any
	// handover since: still no node has left Ready.
	deadline := time.After(time.Until(killed.Add(grace + 10*time.Second)))
	select {
	case n := <-notReady:
		t.Fatalf("node %s stopped being Ready", n)
	case <-deadline:
	}
}

// nodeLeaseHolders lists the nodes by the holder of their Lease.
func nodeLeaseHolders(t *testing.T, client kubernetes.Interface) map[string][]string {
	t.Helper()
	leases, err := client.CoordinationV1().Leases(corev1.NamespaceNodeLease).List(context.Background(),
		metav1.ListOptions{LabelSelector: "!" + kubeletsim.MemberLabel})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, l := range leases.Items {
		h := ptr.Deref(l.Spec.HolderIdentity, "")
		out[h] = append(out[h], l.Name)
	}
	return out
}

// watchNotReady reports on the channel every node whose Ready condition is
// seen other than True from now on (all nodes are Ready now).
func watchNotReady(t *testing.T, client kubernetes.Interface) <-chan string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	factory := informers.NewSharedInformerFactory(client, 0)
	out := make(chan string, 1000)
	var once sync.Map
	check := func(obj any) {
		if n, ok := obj.(*corev1.Node); ok && !nodeReady(n) {
			if _, seen := once.LoadOrStore(n.Name, true); !seen {
				out <- n.Name
			}
		}
	}
	if _, err := factory.Core().V1().Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: check, UpdateFunc: func(_, obj any) { check(obj) },
	}); err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	t.Cleanup(func() { cancel(); factory.Shutdown() })
	return out
}
