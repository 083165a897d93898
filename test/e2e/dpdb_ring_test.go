//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// ringClusters hold the 9-pod ring, pod i in ringClusters[i%3].
var ringClusters = []string{"red", "blue", "green"}

// ringPod is the name of pod i of the ring: the three shards it holds.
func ringPod(i int) string {
	return fmt.Sprintf("database-%02d-%02d-%02d", i%9*10, (i+1)%9*10, (i+2)%9*10)
}

// ringManifest is pod i and its DPDB: minAvailable 4 of itself and the 4
// pods that share a shard with it (i±1, i±2), wherever they run.
func ringManifest(i int) string {
	var fed strings.Builder
	for _, d := range []int{-2, -1, 1, 2} {
		j := (i + d + 9) % 9
		fmt.Fprintf(&fed, "  - {name: %s, cluster: %s}\n", ringPod(j), ringClusters[j%3])
	}
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %[1]s, labels: {ring: %[1]s}}
spec:
  terminationGracePeriodSeconds: 0
  containers: [{name: db, image: cassandra}]
---
apiVersion: policy.kubesim.io/v1alpha1
kind: DistributedPodDisruptionBudget
metadata: {name: %[1]s}
spec:
  selector: {matchLabels: {ring: %[1]s}}
  minAvailable: 4
  federation:
%[2]s`, ringPod(i), fed.String())
}

type ringCluster struct {
	e      *env
	client kubernetes.Interface
	dyn    dynamic.Interface
}

// TestDPDBRing is the demo of issue 11: three clusters, a 9-pod ring, one
// DPDB per pod federated across clusters with the 4 pods that share its
// shards. Evicting one pod spends the budget of it and its 4 neighbours
// only; a neighbour's eviction is then refused; the pod's return restores
// every budget. The federation's credentials can do nothing else.
func TestDPDBRing(t *testing.T) {
	e := newEnv(t)
	clusters := map[string]*ringCluster{}
	for _, name := range ringClusters {
		e.createCluster(name, "--nodes", "1")
		ce := *e
		ce.cluster = name
		kc := e.must("get", "kubeconfig", "--name", name).stdout
		cfg, err := clientcmd.RESTConfigFromKubeConfig([]byte(kc))
		if err != nil {
			t.Fatalf("kubeconfig of %s: %v", name, err)
		}
		dyn, err := dynamic.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		clusters[name] = &ringCluster{e: &ce, client: clientsetFor(t, cfg), dyn: dyn}
	}
	e.must(append([]string{"federate"}, ringClusters...)...)
	for i := range 9 {
		clusters[ringClusters[i%3]].e.apply(ringManifest(i))
	}
	at := func(i int) *ringCluster { return clusters[ringClusters[i%3]] }
	for _, name := range ringClusters {
		waitPods(t, clusters[name].client, "ring", 3)
	}
	for i := range 9 {
		waitAllowed(t, at(i).client, at(i).dyn, "default", ringPod(i), 1)
	}
	out := clusters["blue"].e.kubectl("get", "dpdb").stdout
	if !strings.Contains(out, ringPod(4)) || !strings.Contains(out, "4/4") {
		t.Errorf("kubectl get dpdb in blue:\n%s", out)
	}

	// Evict database-30-40-50 (pod 3, in red): its budget and its four
	// neighbours' (1, 2, 4, 5) go to 0; the other four keep 1.
	evict := func(i int) error {
		return at(i).client.PolicyV1().Evictions("default").Evict(context.Background(), &policyv1.Eviction{
			ObjectMeta: metav1.ObjectMeta{Name: ringPod(i), Namespace: "default"}})
	}
	if err := evict(3); err != nil {
		t.Fatalf("evicting %s: %v", ringPod(3), err)
	}
	waitGone(t, at(3).client, ringPod(3))
	for i := range 9 {
		want := int64(1)
		if d := (i - 3 + 9) % 9; d <= 2 || d >= 7 {
			want = 0
		}
		waitAllowed(t, at(i).client, at(i).dyn, "default", ringPod(i), want)
	}
	for _, i := range []int{1, 2, 4, 5} {
		// Refused by the webhook, which checks the federation live, before
		// the API server looks at the child PDB.
		if err := evict(i); !apierrors.IsTooManyRequests(err) || !strings.Contains(err.Error(), "federation allows no disruption") {
			t.Errorf("evicting neighbour %s: %v, want the webhook's refusal (429)", ringPod(i), err)
		}
	}
	// The pod comes back: every budget is 1 again.
	at(3).e.apply(ringManifest(3))
	waitPods(t, at(3).client, "ring="+ringPod(3), 1)
	for i := range 9 {
		waitAllowed(t, at(i).client, at(i).dyn, "default", ringPod(i), 1)
	}

	// Neighbours evicted at the same moment in two clusters: the webhook's
	// federation lock lets at most one of each pair through.
	t.Run("simultaneous evictions of neighbours", func(t *testing.T) {
		admitted := 0
		for round := range 3 {
			errs := make(chan error, 2)
			for _, i := range []int{3, 4} {
				go func() { errs <- evict(i) }()
			}
			evicted := 0
			for range 2 {
				if err := <-errs; err == nil {
					evicted++
				} else if !apierrors.IsTooManyRequests(err) {
					t.Errorf("round %d: eviction failed otherwise than by the budget: %v", round, err)
				}
			}
			if evicted > 1 {
				t.Fatalf("round %d: both neighbours evicted: the budget was spent twice", round)
			}
			admitted += evicted
			for _, i := range []int{3, 4} {
				if _, err := at(i).client.CoreV1().Pods("default").Get(context.Background(), ringPod(i), metav1.GetOptions{}); apierrors.IsNotFound(err) {
					at(i).e.apply(ringManifest(i))
				}
				waitPods(t, at(i).client, "ring="+ringPod(i), 1)
			}
			for i := range 9 {
				waitAllowed(t, at(i).client, at(i).dyn, "default", ringPod(i), 1)
			}
		}
		if admitted == 0 {
			t.Error("no eviction of any pair went through")
		}
	})

	t.Run("federation credentials are least privilege", func(t *testing.T) {
		secret, err := clusters["red"].client.CoreV1().Secrets("kubesim-dpdb").Get(context.Background(), "federation", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := secret.Data["red"]; ok || len(secret.Data) != 2 {
			t.Errorf("red's federation Secret holds %d kubeconfigs (red's own: %v), want blue's and green's", len(secret.Data), ok)
		}
		cfg, err := clientcmd.RESTConfigFromKubeConfig(secret.Data["blue"])
		if err != nil {
			t.Fatal(err)
		}
		blue := clientsetFor(t, cfg)
		ctx := context.Background()
		if _, err := blue.PolicyV1().PodDisruptionBudgets("default").Get(ctx, ringPod(1), metav1.GetOptions{}); err != nil {
			t.Errorf("reading a PDB in blue: %v", err)
		}
		lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "probe"}}
		if _, err := blue.CoordinationV1().Leases("kubesim-dpdb").Create(ctx, lease, metav1.CreateOptions{}); err != nil {
			t.Errorf("taking a lock Lease in blue: %v", err)
		}
		for what, err := range map[string]error{
			"list pods":          listErr(blue.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})),
			"read secrets":       listErr(blue.CoreV1().Secrets("kubesim-dpdb").List(ctx, metav1.ListOptions{})),
			"delete a PDB":       blue.PolicyV1().PodDisruptionBudgets("default").Delete(ctx, ringPod(1), metav1.DeleteOptions{}),
			"evict a pod":        blue.PolicyV1().Evictions("default").Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: ringPod(1), Namespace: "default"}}),
			"a Lease elsewhere":  createErr(blue.CoordinationV1().Leases("default").Create(ctx, lease, metav1.CreateOptions{})),
			"create a ConfigMap": createErr(blue.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})),
		} {
			if !apierrors.IsForbidden(err) {
				t.Errorf("%s with the federation's credentials: %v, want 403", what, err)
			}
		}
	})

	// A member cluster that cannot be reached: the webhook refuses, naming it.
	e.must("stop", "cluster", "--name", "green")
	err := evict(0)
	if !apierrors.IsTooManyRequests(err) || !strings.Contains(err.Error(), "green") {
		t.Errorf("evicting %s with green stopped: %v, want a refusal naming green", ringPod(0), err)
	}
}

func listErr[T any](_ T, err error) error   { return err }
func createErr[T any](_ T, err error) error { return err }
