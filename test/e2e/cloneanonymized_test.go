//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// podSecuritySource is what many monitoring stacks ship: a namespace
// whose Pod Security labels (all three modes, with versions) let a
// privileged node agent run, its pods carrying the deprecated AppArmor
// and seccomp annotations; and a namespace enforcing restricted, with
// pods that comply.
const podSecuritySource = `
apiVersion: v1
kind: Namespace
metadata:
  name: acme-monitoring
  labels:
    app.kubernetes.io/part-of: acme-observability
    pod-security.kubernetes.io/enforce: privileged
    pod-security.kubernetes.io/enforce-version: latest
    pod-security.kubernetes.io/audit: baseline
    pod-security.kubernetes.io/audit-version: v1.30
    pod-security.kubernetes.io/warn: restricted
    pod-security.kubernetes.io/warn-version: latest
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: acme-node-exporter, namespace: acme-monitoring}
spec:
  selector: {matchLabels: {app.kubernetes.io/name: acme-node-exporter}}
  template:
    metadata:
      labels: {app.kubernetes.io/name: acme-node-exporter}
      annotations: {container.apparmor.security.beta.kubernetes.io/acme-exporter: unconfined}
    spec:
      hostNetwork: true
      hostPID: true
      containers:
      - name: acme-exporter
        image: quay.io/acme/node-exporter:v1.8.0
        securityContext: {privileged: true}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: acme-metrics, namespace: acme-monitoring}
spec:
  replicas: 2
  selector: {matchLabels: {app.kubernetes.io/name: acme-metrics}}
  template:
    metadata:
      labels: {app.kubernetes.io/name: acme-metrics}
      annotations: {seccomp.security.alpha.kubernetes.io/pod: runtime/default}
    spec:
      containers: [{name: acme-metrics, image: quay.io/acme/metrics:v2.1}]
---
apiVersion: v1
kind: Namespace
metadata:
  name: acme-shop
  labels:
    pod-security.kubernetes.io/enforce: restricted
    pod-security.kubernetes.io/enforce-version: v1.30
    pod-security.kubernetes.io/audit: restricted
    pod-security.kubernetes.io/audit-version: latest
    pod-security.kubernetes.io/warn: restricted
    pod-security.kubernetes.io/warn-version: latest
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: acme-shop, namespace: acme-shop}
spec:
  replicas: 2
  selector: {matchLabels: {app.kubernetes.io/name: acme-shop}}
  template:
    metadata:
      labels: {app.kubernetes.io/name: acme-shop}
    spec:
      securityContext: {runAsNonRoot: true, runAsUser: 1000, seccompProfile: {type: RuntimeDefault}}
      containers:
      - name: acme-shop
        image: registry.acme.example/shop:v3
        securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
`

// TestCloneAnonymizedPodSecurity: issue 49. A source with Pod Security
// labels in all three modes and privileged pods, exported with
// --anonymize and cloned from the file, comes up whole: every namespace
// Active with the source's Pod Security labels, every pod Running on its
// (renamed) node, the nodes' zone, OS and instance type as they were.
// The cluster's own objects are as a plain clone has them: no copy of
// kubesim's namespace or Service, no controller service account under a
// new name, default/kubernetes the API server's, at its address.
func TestCloneAnonymizedPodSecurity(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.createCluster("src", "--nodes", "2")
	e.kubectl("label", "node", "node-000000", "topology.kubernetes.io/zone=z1", "node.kubernetes.io/instance-type=m5.large")
	e.kubectl("label", "node", "node-000001", "topology.kubernetes.io/zone=z2", "node.kubernetes.io/instance-type=m5.large")
	e.apply(podSecuritySource)
	src := contextClient(t, e.kubeconfig, "kubesim-src")
	eventually(t, 2*time.Minute, "the source's pods Running", func() error {
		// acme-node-exporter 2 (one a node), acme-metrics 2, acme-shop 2.
		return allRunning(ctx, src, 6)
	})

	anon := filepath.Join(t.TempDir(), "anon.yaml")
	e.must("snapshot", "export", "--context", "kubesim-src", "--path", anon, "--anonymize", "--anonymize-key", strings.Repeat("49", 32))
	data, err := os.ReadFile(anon)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "acme") {
		t.Error("the anonymized snapshot holds the source's names (acme…)")
	}
	e.createCluster("anon", "--from", anon)
	clone := contextClient(t, e.kubeconfig, "kubesim-anon")

	// Namespaces: as many as the source's, all Active, each with its
	// source's Pod Security labels.
	srcNamespaces := bySourceUID(mustList(t, func() ([]corev1.Namespace, error) {
		l, err := src.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		return l.Items, err
	}))
	cloneNamespaces := mustList(t, func() ([]corev1.Namespace, error) {
		l, err := clone.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		return l.Items, err
	})
	if len(cloneNamespaces) != len(srcNamespaces) {
		t.Errorf("the clone has namespaces %v, the source %d: want no namespace copied under a new name", namespaceNames(cloneNamespaces), len(srcNamespaces))
	}
	checked := 0
	for _, ns := range cloneNamespaces {
		if ns.Status.Phase != corev1.NamespaceActive {
			t.Errorf("namespace %s is %s", ns.Name, ns.Status.Phase)
		}
		from, ok := srcNamespaces[ns.Annotations["kubesim.io/source-uid"]]
		if !ok {
			continue
		}
		if got, want := podSecurityLabels(ns.Labels), podSecurityLabels(from.Labels); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("namespace %s (the source's %s): Pod Security labels %v, want %v", ns.Name, from.Name, got, want)
		}
		if len(podSecurityLabels(from.Labels)) == 6 {
			checked++
		}
	}
	if checked != 2 {
		t.Errorf("%d namespaces of the source's Pod Security labels found in the clone, want acme-monitoring's and acme-shop's", checked)
	}

	// Pods: all Running, each on its source's node; nodes as they were.
	if err := allRunning(ctx, clone, 6); err != nil {
		t.Errorf("the anonymized clone: %v", err)
	}
	if got, want := placementBySource(t, clone), placementBySource(t, src); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the clone's placement (source pod uid → source node uid)\n%v\nthe source's\n%v", got, want)
	}
	srcNodes := bySourceUID(mustList(t, func() ([]corev1.Node, error) {
		l, err := src.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		return l.Items, err
	}))
	for _, n := range mustList(t, func() ([]corev1.Node, error) {
		l, err := clone.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		return l.Items, err
	}) {
		from := srcNodes[n.Annotations["kubesim.io/source-uid"]]
		for _, key := range []string{"topology.kubernetes.io/zone", "kubernetes.io/os", "kubernetes.io/arch", "node.kubernetes.io/instance-type"} {
			if n.Labels[key] == "" || n.Labels[key] != from.Labels[key] {
				t.Errorf("node %s (the source's %s): %s=%q, want %q", n.Name, from.Name, key, n.Labels[key], from.Labels[key])
			}
		}
	}

	// The cluster's own objects: the same Services and kube-system
	// service accounts as the source's, the API server's Service its own.
	if got, want := serviceNames(t, clone), serviceNames(t, src); !slices.Equal(got, want) {
		t.Errorf("the clone's Services %v, the source's %v", got, want)
	}
	if got, want := accountNames(t, clone), accountNames(t, src); !slices.Equal(got, want) {
		t.Errorf("the clone's kube-system service accounts %v, the source's %v", got, want)
	}
	srcAPI, err := src.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cloneAPI, err := clone.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cloneAPI.Spec.ClusterIP != srcAPI.Spec.ClusterIP || cloneAPI.Labels["component"] != "apiserver" {
		t.Errorf("the clone's default/kubernetes: %s %v, want the API server's (%s, component=apiserver)", cloneAPI.Spec.ClusterIP, cloneAPI.Labels, srcAPI.Spec.ClusterIP)
	}
}

// allRunning is nil once the pods outside kube-system number want and
// are all Running.
func allRunning(ctx context.Context, c kubernetes.Interface, want int) error {
	pods, err := c.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	n := 0
	for _, p := range pods.Items {
		if p.Namespace == metav1.NamespaceSystem {
			continue
		}
		n++
		if p.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("pod %s/%s is %s", p.Namespace, p.Name, p.Status.Phase)
		}
	}
	if n != want {
		return fmt.Errorf("%d pods, want %d", n, want)
	}
	return nil
}

func mustList[T any](t *testing.T, list func() ([]T, error)) []T {
	t.Helper()
	items, err := list()
	if err != nil {
		t.Fatal(err)
	}
	return items
}

// bySourceUID keys a source's objects by their uids, as a clone's carry
// them in kubesim.io/source-uid.
func bySourceUID[T any, PT interface {
	*T
	metav1.Object
}](items []T) map[string]*T {
	out := map[string]*T{}
	for i := range items {
		out[string(PT(&items[i]).GetUID())] = &items[i]
	}
	return out
}

func namespaceNames(namespaces []corev1.Namespace) []string {
	var out []string
	for _, ns := range namespaces {
		out = append(out, ns.Name)
	}
	return out
}

func podSecurityLabels(labels map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range labels {
		if strings.HasPrefix(k, "pod-security.kubernetes.io/") {
			out[k] = v
		}
	}
	return out
}

// serviceNames are a cluster's Services (the source has only its own),
// each with its ExternalName target.
func serviceNames(t *testing.T, c kubernetes.Interface) []string {
	t.Helper()
	list, err := c.CoreV1().Services(metav1.NamespaceAll).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range list.Items {
		out = append(out, s.Namespace+"/"+s.Name+"→"+s.Spec.ExternalName)
	}
	slices.Sort(out)
	return out
}

func accountNames(t *testing.T, c kubernetes.Interface) []string {
	t.Helper()
	list, err := c.CoreV1().ServiceAccounts(metav1.NamespaceSystem).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	for _, sa := range list.Items {
		set[sa.Name] = true
	}
	return slices.Sorted(maps.Keys(set))
}
