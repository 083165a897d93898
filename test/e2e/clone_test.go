//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// TestCloneIsTheSourcesShape makes a kubesim cluster the "production" one
// (zoned node groups, a spread Deployment, a StatefulSet with PVCs, a
// DaemonSet, a Job, PDBs of the three kinds, a PriorityClass, a mirror
// pod, a ReplicaSet whose live pods carry a sidecar its template lacks),
// exports it (its file checked) and clones it straight from its context:
// every pod on its node and Running, every PDB allowing what it allows in
// the source, an eviction refused in both. An anonymized export holds none
// of the source's names, and its clone has every pod on the same (renamed)
// node, Running. Neither clone has a pod made or deleted by a controller in
// its first 2 minutes (the measure; both are watched at once), and
// the source's objects are untouched.
func TestCloneIsTheSourcesShape(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.createCluster("prod", "--config", "testdata/clone/cluster.yaml")
	src := contextClient(t, e.kubeconfig, "kubesim-prod")
	manifest, err := os.ReadFile("testdata/clone/production.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e.apply(string(manifest))

	// A static pod's mirror, and a ReplicaSet whose pods a webhook gave a
	// sidecar: made first, they are adopted by the ReplicaSet made after.
	mirror := testPod("static-proxy-a-0")
	mirror.Namespace, mirror.Spec.NodeName = "kube-system", "a-0"
	mirror.Annotations = map[string]string{"kubernetes.io/config.mirror": "abc", "kubernetes.io/config.source": "file"}
	createPodIn(t, src, mirror)
	app := corev1.Container{Name: "app", Image: "app", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}
	proxy := corev1.Container{Name: "proxy", Image: "envoy", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")}}}
	for i, node := range []string{"b-0", "b-1"} {
		p := labelledPod(fmt.Sprintf("side-%d", i), map[string]string{"app": "side"})
		p.Spec.NodeName, p.Spec.Containers = node, []corev1.Container{app, proxy}
		createPodIn(t, src, p)
	}
	waitPods(t, src, "app=side", 2)
	side := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "side"}, Spec: appsv1.ReplicaSetSpec{
		Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "side"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "side"}}, Spec: corev1.PodSpec{Containers: []corev1.Container{app}}}}}
	if _, err := src.AppsV1().ReplicaSets("default").Create(ctx, side, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "the source settled", func() error {
		pods, err := src.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		// web 6, db 3, agent 6, report 2, side 2 (adopted, not new).
		if len(pods.Items) != 19 {
			return fmt.Errorf("%d pods", len(pods.Items))
		}
		for _, p := range pods.Items {
			if p.Status.Phase != corev1.PodRunning || !podReady(&p) || len(p.OwnerReferences) == 0 {
				return fmt.Errorf("pod %s: %s, owners %v", p.Name, p.Status.Phase, p.OwnerReferences)
			}
		}
		return pdbsSettled(ctx, src)
	})
	before := sourceVersions(t, src)
	placement := podPlacement(t, src)
	allowed := pdbAllowed(t, src)

	// A user who may not list pods: the kind is skipped and named, the
	// rest goes on.
	readerContext(t, e, src)
	partial := filepath.Join(t.TempDir(), "partial.yaml")
	r := e.must("snapshot", "export", "--context", "reader", "--path", partial)
	if !strings.Contains(r.stderr, "Skipped, not allowed to list them: Pod") {
		t.Errorf("export as a user without pods: %s", r)
	}
	if data, _ := os.ReadFile(partial); !strings.Contains(string(data), `"Pod":"forbidden"`) || strings.Contains(string(data), "\nkind: Pod\n") {
		t.Errorf("the header does not say pods were forbidden, or pods were written")
	}

	snap := filepath.Join(t.TempDir(), "prod.yaml")
	e.must("snapshot", "export", "--context", "kubesim-prod", "--path", snap)
	data, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"hunter2", "s3cret", "fsync=off", "managedFields", "resourceVersion", "config.mirror"} {
		if strings.Contains(string(data), secret) {
			t.Errorf("the snapshot holds %q", secret)
		}
	}

	// Straight from the context (the file's content is as --from reads
	// it: the anonymized export below is cloned from its file).
	e.createCluster("what-if", "--from-context", "kubesim-prod")
	clone := contextClient(t, e.kubeconfig, "kubesim-what-if")
	cloneWatch := watchPods(t, clone)
	got := map[string]string{}
	for _, p := range cloneWatch.pods {
		if p.Status.Phase != corev1.PodRunning {
			t.Errorf("pod %s/%s is %s in the clone", p.Namespace, p.Name, p.Status.Phase)
		}
		got[p.Namespace+"/"+p.Name] = p.Spec.NodeName
	}
	for pod, node := range placement {
		if got[pod] != node {
			t.Errorf("pod %s: on %q in the clone, %q in the source", pod, got[pod], node)
		}
	}
	if len(got) != len(placement) {
		t.Errorf("the clone has %d pods, the source %d", len(got), len(placement))
	}
	eventually(t, time.Minute, "the clone's PDBs allowing what the source's do", func() error {
		if err := pdbsSettled(ctx, clone); err != nil {
			return err
		}
		if now := pdbAllowed(t, clone); fmt.Sprint(now) != fmt.Sprint(allowed) {
			return fmt.Errorf("clone %v, source %v", now, allowed)
		}
		return nil
	})
	for name, c := range map[string]kubernetes.Interface{"source": src, "clone": clone} {
		err := c.PolicyV1().Evictions("default").Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: firstPod(t, c, "app=web"), Namespace: "default"},
			DeleteOptions: &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}})
		if !apierrors.IsTooManyRequests(err) {
			t.Errorf("%s: evicting a web pod (PDB minAvailable 6 of 6): %v, want refused", name, err)
		}
	}
	rs, err := clone.AppsV1().ReplicaSets("default").Get(ctx, "side", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if names := containerNames(rs.Spec.Template.Spec.Containers); !slices.Equal(names, []string{"app", "proxy"}) {
		t.Errorf("the clone's ReplicaSet side has containers %v, want its live pods' app and proxy", names)
	}

	// --anonymize: none of the source's names in the file, its
	// revisions rewritten as their workloads are, and a clone of it with
	// every pod on its node (renamed), Running.
	anon := filepath.Join(t.TempDir(), "anon.yaml")
	key := strings.Repeat("5e", 32)
	e.must("snapshot", "export", "--context", "kubesim-prod", "--path", anon, "--anonymize", "--anonymize-key", key)
	anonData, err := os.ReadFile(anon)
	if err != nil {
		t.Fatal(err)
	}
	for name := range sourceNames(placement) {
		if regexp.MustCompile(`(^|[^a-z0-9])` + regexp.QuoteMeta(name) + `([^a-z0-9]|$)`).Match(anonData) {
			t.Errorf("the anonymized snapshot holds the source's name %q", name)
		}
	}
	if n := strings.Count(string(anonData), "\nkind: ControllerRevision\n"); n < 2 {
		t.Errorf("the anonymized snapshot holds %d ControllerRevisions, want the StatefulSet's and the DaemonSet's", n)
	}
	e.createCluster("anon", "--from", anon)
	anonClone := contextClient(t, e.kubeconfig, "kubesim-anon")
	anonWatch := watchPods(t, anonClone)
	for _, p := range anonWatch.pods {
		if p.Status.Phase != corev1.PodRunning {
			t.Errorf("pod %s/%s is %s in the anonymized clone", p.Namespace, p.Name, p.Status.Phase)
		}
	}
	if got, want := placementBySource(t, anonClone), placementBySource(t, src); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the anonymized clone's placement (source pod uid → source node uid)\n%v\nthe source's\n%v", got, want)
	}
	eventually(t, time.Minute, "the anonymized clone's PDBs allowing what the source's do", func() error {
		if got, want := pdbAllowedBySource(t, anonClone), pdbAllowedBySource(t, src); fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("by source uid: %v, the source's %v", got, want)
		}
		return nil
	})

	// No churn: no pod made or deleted in either clone in its first 2
	// minutes (the measure; the watches began as each was made).
	cloneWatch.noChurn(t, "the clone", 2*time.Minute)
	anonWatch.noChurn(t, "the anonymized clone", 2*time.Minute)

	// The clone's pods came Running, their addresses from the
	// simulator's pools: no two alike, and a pod made since (a web
	// pod's replacement) gets none of theirs.
	running, err := addressesDistinct(ctx, clone, 0)
	if err != nil {
		t.Error(err)
	}
	victim := firstPod(t, clone, "app=web")
	if err := clone.CoreV1().Pods("default").Delete(ctx, victim, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "web pod "+victim+" replaced, Running, with an address of its own", func() error {
		_, err := addressesDistinct(ctx, clone, running)
		return err
	})

	if after := sourceVersions(t, src); fmt.Sprint(after) != fmt.Sprint(before) {
		for k, v := range after {
			if before[k] != v {
				t.Errorf("the source's %s changed (resourceVersion %s → %s)", k, before[k], v)
			}
		}
	}
}

// TestCloneBadInput: each bad source is refused in one line before a
// cluster is made; a clone that fails once made leaves no cluster.
func TestCloneBadInput(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["gone"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1", InsecureSkipTLSVerify: true}
	cfg.AuthInfos["gone"] = &clientcmdapi.AuthInfo{Token: "x"}
	cfg.Contexts["gone"] = &clientcmdapi.Context{Cluster: "gone", AuthInfo: "gone"}
	if err := os.MkdirAll(filepath.Dir(e.kubeconfig), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := clientcmd.WriteToFile(*cfg, e.kubeconfig); err != nil {
		t.Fatal(err)
	}
	e.fails("cannot reach the API server of gone", "create", "cluster", "--name", "x", "--from-context", "gone")
	e.fails(`--context "nope": no such context in the kubeconfig (it has: gone)`, "snapshot", "export", "--context", "nope", "--path", filepath.Join(dir, "s.yaml"))
	other := filepath.Join(dir, "other.yaml")
	writeFile(t, other, []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n"))
	e.fails("not a kubesim snapshot", "create", "cluster", "--name", "x", "--from", other)
	newer := filepath.Join(dir, "newer.yaml")
	writeFile(t, newer, []byte(`# kubesim.io/snapshot: {"format":1,"kubernetes":"v1.99.0","source":"prod","counts":{}}`+"\n"))
	e.fails("exported from Kubernetes v1.99.0, newer than the clone's v1.36.3: give --kubernetes 1.99 or later", "create", "cluster", "--name", "x", "--from", newer)
	e.fails("--from: open", "create", "cluster", "--name", "x", "--from", filepath.Join(dir, "missing.yaml"))
	if r := e.must("get", "clusters"); strings.Contains(r.stdout, "x ") {
		t.Errorf("a refused clone left a cluster: %s", r.stdout)
	}

	// Made, then failing: a pod whose PriorityClass the snapshot lacks.
	// It is bound to a cloned node, but not written straight into etcd:
	// the API server's admission refuses it, as it would any create.
	bad := oneNodeSnapshot(t, `metadata: {name: p, namespace: default}
spec: {nodeName: n1, serviceAccountName: default, priorityClassName: nope, priority: 0, containers: [{name: c, image: c}]}`)
	r := e.run("create", "cluster", "--name", "half", "--from", bad)
	if r.code == 0 || !strings.Contains(r.stderr, `creating Pod default/p`) || !strings.Contains(r.stderr, `nope`) ||
		!strings.Contains(r.stderr, `cluster "half" deleted; --retain keeps it`) {
		t.Errorf("a clone failing once made: %s", r)
	}
	if !strings.Contains(r.stdout+r.stderr, "1 of 1 pods are created through the API server, not written straight into etcd (pod default/p: its PriorityClass nope does not exist)") {
		t.Errorf("the clone does not say why the pod went through the API server: %s", r)
	}
	if r := e.must("get", "clusters"); strings.Contains(r.stdout, "half") {
		t.Errorf("a failed clone left its cluster: %s", r.stdout)
	}
}

// TestCloneOfSlowStages: when the cluster's pod stages do not make a pod
// Running at once (--stages realistic: pods start after a delay), the
// clone says so and leaves its pods to the API server and the simulator,
// which start them as any other; with the default stages they come
// Running, written straight into etcd.
func TestCloneOfSlowStages(t *testing.T) {
	e := newEnv(t)
	file := oneNodeSnapshot(t, "metadata: {name: a, namespace: default}\n"+boundPodSpec, "metadata: {name: b, namespace: default}\n"+boundPodSpec)
	why := regexp.MustCompile(`2 of 2 pods are created through the API server, not written straight into etcd \(pod default/[ab]: stage pod-create waits`)
	for _, tc := range []struct {
		name  string
		flags []string
		slow  bool
	}{{"direct", nil, false}, {"slow", []string{"--stages", "realistic"}, true}} {
		r := e.must(append([]string{"create", "cluster", "--name", tc.name, "--from", file}, tc.flags...)...)
		if said := why.MatchString(r.stdout + r.stderr); said != tc.slow {
			t.Errorf("%s: said the pods go through the API server: %v, want %v: %s", tc.name, said, tc.slow, r)
		}
		c := contextClient(t, e.kubeconfig, "kubesim-"+tc.name)
		if _, err := addressesDistinct(context.Background(), c, 2); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// oneNodeSnapshot writes a snapshot file of node n1 and pods (each a
// Pod's metadata and spec in YAML), and returns its path.
func oneNodeSnapshot(t *testing.T, pods ...string) string {
	t.Helper()
	doc := fmt.Sprintf(`# kubesim.io/snapshot: {"format":1,"kubernetes":"v1.36.3","source":"prod","counts":{"Node":1,"Pod":%d}}
---
apiVersion: v1
kind: Node
metadata: {name: n1}
`, len(pods))
	for _, p := range pods {
		doc += "---\napiVersion: v1\nkind: Pod\n" + p + "\n"
	}
	path := filepath.Join(t.TempDir(), "snapshot.yaml")
	writeFile(t, path, []byte(doc))
	return path
}

func contextClient(t *testing.T, kubeconfig, context string) *kubernetes.Clientset {
	t.Helper()
	return clientsetFor(t, contextConfig(t, kubeconfig, context))
}

func contextConfig(t *testing.T, kubeconfig, context string) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func createPodIn(t *testing.T, client kubernetes.Interface, p *corev1.Pod) {
	t.Helper()
	if p.Namespace == "" {
		p.Namespace = "default"
	}
	if _, err := client.CoreV1().Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// readerContext adds the context "reader": the source's admin acting as a
// user granted deploy/'s snapshot reader role without pods.
func readerContext(t *testing.T, e *env, src kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	data, err := os.ReadFile("../../deploy/snapshot-reader-clusterrole.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.Unmarshal(data, &role); err != nil {
		t.Fatal(err)
	}
	for i, rule := range role.Rules {
		role.Rules[i].Resources = slices.DeleteFunc(rule.Resources, func(r string) bool { return r == "pods" })
	}
	if _, err := src.RbacV1().ClusterRoles().Create(ctx, &role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "reader"}, RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: "reader"}}}
	if _, err := src.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.LoadFromFile(e.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	admin := cfg.Contexts["kubesim-prod"]
	user := cfg.AuthInfos[admin.AuthInfo].DeepCopy()
	user.Impersonate = "reader"
	cfg.AuthInfos["reader"] = user
	cfg.Contexts["reader"] = &clientcmdapi.Context{Cluster: admin.Cluster, AuthInfo: "reader"}
	if err := clientcmd.WriteToFile(*cfg, e.kubeconfig); err != nil {
		t.Fatal(err)
	}
}

// sourceVersions are the resourceVersions of the objects an export reads
// that nothing in a settled kubesim cluster writes (nodes and their
// Leases are renewed all the time).
func sourceVersions(t *testing.T, c kubernetes.Interface) map[string]string {
	t.Helper()
	ctx, opts := context.Background(), metav1.ListOptions{}
	lists := map[string]func() (runtime.Object, error){
		"Pod":                   func() (runtime.Object, error) { return c.CoreV1().Pods("").List(ctx, opts) },
		"Deployment":            func() (runtime.Object, error) { return c.AppsV1().Deployments("").List(ctx, opts) },
		"ReplicaSet":            func() (runtime.Object, error) { return c.AppsV1().ReplicaSets("").List(ctx, opts) },
		"StatefulSet":           func() (runtime.Object, error) { return c.AppsV1().StatefulSets("").List(ctx, opts) },
		"PodDisruptionBudget":   func() (runtime.Object, error) { return c.PolicyV1().PodDisruptionBudgets("").List(ctx, opts) },
		"PersistentVolumeClaim": func() (runtime.Object, error) { return c.CoreV1().PersistentVolumeClaims("").List(ctx, opts) },
		"PersistentVolume":      func() (runtime.Object, error) { return c.CoreV1().PersistentVolumes().List(ctx, opts) },
	}
	out := map[string]string{}
	for kind, list := range lists {
		l, err := list()
		if err != nil {
			t.Fatalf("listing %s: %v", kind, err)
		}
		items, err := meta.ExtractList(l)
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range items {
			o, err := meta.Accessor(item)
			if err != nil {
				t.Fatal(err)
			}
			out[kind+" "+o.GetNamespace()+"/"+o.GetName()] = o.GetResourceVersion()
		}
	}
	if len(out) < 30 {
		t.Fatalf("only %d objects in the source", len(out))
	}
	return out
}

func podPlacement(t *testing.T, c kubernetes.Interface) map[string]string {
	t.Helper()
	pods, err := c.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range pods.Items {
		out[p.Namespace+"/"+p.Name] = p.Spec.NodeName
	}
	return out
}

func pdbAllowed(t *testing.T, c kubernetes.Interface) map[string]int32 {
	t.Helper()
	pdbs, err := c.PolicyV1().PodDisruptionBudgets("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int32{}
	for _, p := range pdbs.Items {
		out[p.Name] = p.Status.DisruptionsAllowed
	}
	return out
}

// pdbAllowedBySource is each PDB's disruptionsAllowed by its source's uid
// (a clone's carry it as kubesim.io/source-uid), once the disruption
// controller has counted its pods.
func pdbAllowedBySource(t *testing.T, c kubernetes.Interface) map[string]int32 {
	t.Helper()
	pdbs, err := c.PolicyV1().PodDisruptionBudgets(metav1.NamespaceAll).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int32{}
	for _, p := range pdbs.Items {
		uid := p.Annotations["kubesim.io/source-uid"]
		if uid == "" {
			uid = string(p.UID)
		}
		out[uid] = p.Status.DisruptionsAllowed
		if p.Status.ObservedGeneration != p.Generation {
			out[uid] = -1 // not counted yet
		}
	}
	return out
}

// pdbsSettled: the disruption controller has counted every PDB's pods.
func pdbsSettled(ctx context.Context, c kubernetes.Interface) error {
	pdbs, err := c.PolicyV1().PodDisruptionBudgets("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	want := map[string]int32{"web": 6, "db": 3, "side": 2}
	for _, p := range pdbs.Items {
		if p.Status.ObservedGeneration != p.Generation || p.Status.CurrentHealthy != want[p.Name] {
			return fmt.Errorf("PDB %s: %d healthy", p.Name, p.Status.CurrentHealthy)
		}
	}
	if len(pdbs.Items) != 3 {
		return fmt.Errorf("%d PDBs", len(pdbs.Items))
	}
	return nil
}

// addressesDistinct checks that every pod not on its node's network has
// an address no other pod has, and its node's address as its host's;
// with want > 0, that want pods are Running. It returns how many are.
func addressesDistinct(ctx context.Context, c kubernetes.Interface, want int) (int, error) {
	pods, err := c.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	nodeIP := map[string]string{}
	for _, n := range nodes.Items {
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				nodeIP[n.Name] = a.Address
			}
		}
	}
	byIP, running := map[string]string{}, 0
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
			continue
		}
		running++
		if p.Status.HostIP != nodeIP[p.Spec.NodeName] {
			return 0, fmt.Errorf("pod %s/%s: hostIP %q, its node %s's address %q", p.Namespace, p.Name, p.Status.HostIP, p.Spec.NodeName, nodeIP[p.Spec.NodeName])
		}
		if p.Spec.HostNetwork {
			continue
		}
		if other, taken := byIP[p.Status.PodIP]; taken || p.Status.PodIP == "" {
			return 0, fmt.Errorf("pod %s/%s has address %q, as has %s", p.Namespace, p.Name, p.Status.PodIP, other)
		}
		byIP[p.Status.PodIP] = p.Namespace + "/" + p.Name
	}
	if want > 0 && running != want {
		return running, fmt.Errorf("%d pods Running, want %d", running, want)
	}
	return running, nil
}

func firstPod(t *testing.T, c kubernetes.Interface, selector string) string {
	t.Helper()
	pods, err := c.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil || len(pods.Items) == 0 {
		t.Fatalf("no pod %s: %v", selector, err)
	}
	return pods.Items[0].Name
}

func containerNames(cs []corev1.Container) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

// podWatch watches a cluster's pods from the moment it was made.
type podWatch struct {
	pods    []corev1.Pod // at the start
	w       watch.Interface
	started time.Time
}

func watchPods(t *testing.T, c kubernetes.Interface) *podWatch {
	t.Helper()
	list, err := c.CoreV1().Pods(metav1.NamespaceAll).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.CoreV1().Pods(metav1.NamespaceAll).Watch(context.Background(), metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return &podWatch{pods: list.Items, w: w, started: time.Now()}
}

// noChurn fails for each pod added or deleted until d after the watch
// began.
func (pw *podWatch) noChurn(t *testing.T, what string, d time.Duration) {
	t.Helper()
	deadline := time.After(time.Until(pw.started.Add(d)))
	for {
		select {
		case ev, ok := <-pw.w.ResultChan():
			if !ok {
				t.Fatalf("%s: the watch of its pods ended early", what)
			}
			if ev.Type == watch.Added || ev.Type == watch.Deleted {
				p := ev.Object.(*corev1.Pod)
				t.Errorf("churn in %s: pod %s/%s %s", what, p.Namespace, p.Name, ev.Type)
			}
		case <-deadline:
			return
		}
	}
}

// placementBySource is each pod's node, both by their source's uids (the
// kubesim.io/source-uid annotation a clone's objects carry; in the source
// itself, their own): names differ in an anonymized clone, uids do not.
func placementBySource(t *testing.T, c kubernetes.Interface) map[string]string {
	t.Helper()
	ctx := context.Background()
	nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sourceUID := func(o metav1.Object) string {
		if uid := o.GetAnnotations()["kubesim.io/source-uid"]; uid != "" {
			return uid
		}
		return string(o.GetUID())
	}
	nodeUID := map[string]string{}
	for i := range nodes.Items {
		nodeUID[nodes.Items[i].Name] = sourceUID(&nodes.Items[i])
	}
	pods, err := c.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for i := range pods.Items {
		out[sourceUID(&pods.Items[i])] = nodeUID[pods.Items[i].Spec.NodeName]
	}
	return out
}

// sourceNames are the names in a placement (namespace/pod → node) that
// an anonymized export must not hold: namespaces but the built-in ones,
// pods and nodes.
func sourceNames(placement map[string]string) map[string]bool {
	names := map[string]bool{}
	for pod, node := range placement {
		ns, name, _ := strings.Cut(pod, "/")
		if ns != "default" && !strings.HasPrefix(ns, "kube-") {
			names[ns] = true
		}
		names[name], names[node] = true, true
	}
	return names
}

// TestCloneDirectPodsAreTheAPIPaths: a pod written straight into etcd is
// the pod the API server and the simulator would have made (a create,
// then the simulator's status patch), but for what differs between any
// two clones (uids, times, addresses). The same export is cloned both
// ways: directly, and through the API server (an API server with
// extraArgs turns the direct path off).
func TestCloneDirectPodsAreTheAPIPaths(t *testing.T) {
	e := newEnv(t)
	e.createCluster("src", "--nodes", "2")
	e.kubectl("label", "node", "node-000000", "topology.kubernetes.io/zone=z1", "topology.kubernetes.io/region=r1")
	e.apply(`apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      priorityClassName: high
      initContainers:
      - {name: setup, image: busybox}
      - {name: proxy, image: envoy, restartPolicy: Always}
      containers:
      - name: app
        image: app:1
        resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {memory: 128Mi}}
---
apiVersion: v1
kind: Pod
metadata: {name: host, namespace: default}
spec:
  nodeName: node-000000
  hostNetwork: true
  containers: [{name: c, image: c}]
`)
	src := contextClient(t, e.kubeconfig, "kubesim-src")
	waitPods(t, src, "app=web", 3)
	waitPods(t, src, "", 4)
	snap := filepath.Join(t.TempDir(), "src.yaml")
	e.must("snapshot", "export", "--context", "kubesim-src", "--path", snap)

	r := e.must("create", "cluster", "--name", "direct", "--from", snap)
	if strings.Contains(r.stdout+r.stderr, "created through the API server") {
		t.Fatalf("an exported cluster's pods went through the API server: %s", r)
	}
	config := filepath.Join(t.TempDir(), "cluster.yaml")
	writeFile(t, config, []byte("apiVersion: kubesim.io/v1alpha1\nkind: Cluster\nname: api\nfrom: "+snap+"\nextraArgs:\n  kube-apiserver: [\"--v=0\"]\n"))
	r = e.must("create", "cluster", "--config", config)
	if !strings.Contains(r.stdout+r.stderr, "Pods are created through the API server, for the simulator to start: the API server has extraArgs") {
		t.Fatalf("the clone with extraArgs did not say its pods go through the API server: %s", r)
	}
	direct, api := comparablePods(t, contextClient(t, e.kubeconfig, "kubesim-direct")), comparablePods(t, contextClient(t, e.kubeconfig, "kubesim-api"))
	if len(direct) != 4 || len(api) != 4 {
		t.Fatalf("pods: %d direct, %d through the API server, want 4 each", len(direct), len(api))
	}
	for name, want := range api {
		if got := direct[name]; got != want {
			t.Errorf("pod %s written straight into etcd:\n%s\nthrough the API server:\n%s", name, got, want)
		}
	}
}

// comparablePods are a cluster's pods as JSON, by name, without what
// differs between any two clones of one source: uids, resource versions,
// managed fields, times, addresses (the owners' uids too).
func comparablePods(t *testing.T, c kubernetes.Interface) map[string]string {
	t.Helper()
	pods, err := c.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	zero := metav1.Time{}
	for _, p := range pods.Items {
		p.UID, p.ResourceVersion, p.ManagedFields, p.CreationTimestamp = "", "", nil, zero
		for i := range p.OwnerReferences {
			p.OwnerReferences[i].UID = ""
		}
		s := &p.Status
		s.StartTime, s.PodIP, s.PodIPs, s.HostIP, s.HostIPs = nil, "", nil, "", nil
		for i := range s.Conditions {
			s.Conditions[i].LastTransitionTime = zero
		}
		for _, statuses := range [][]corev1.ContainerStatus{s.InitContainerStatuses, s.ContainerStatuses} {
			for i := range statuses {
				if r := statuses[i].State.Running; r != nil {
					r.StartedAt = zero
				}
				if done := statuses[i].State.Terminated; done != nil {
					done.StartedAt, done.FinishedAt = zero, zero
				}
			}
		}
		data, err := json.MarshalIndent(p, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		out[p.Namespace+"/"+p.Name] = string(data)
	}
	return out
}
