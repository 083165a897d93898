package scenario

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	policyv1alpha1 "github.com/kubesim/kubesim/apis/policy/v1alpha1"
	"github.com/kubesim/kubesim/internal/descheduler"
	"github.com/kubesim/kubesim/internal/kubeletsim"
)

const fieldManager = "kubesim-scenario"

// readObjects reads the manifests of a YAML file, each with apiVersion and kind.
func readObjects(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for i := 0; ; i++ {
		obj := map[string]any{}
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("%s: document %d: %v", path, i+1, err)
		}
		if len(obj) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: obj}
		if u.GetAPIVersion() == "" || u.GetKind() == "" {
			return nil, fmt.Errorf("%s: document %d: apiVersion and kind are required", path, i+1)
		}
		out = append(out, u)
	}
	return out, nil
}

// objects are the manifests an apply or delete step names.
func objects(a *v1alpha1.ApplyStep) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, f := range a.Files {
		objs, err := readObjects(f)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	for _, r := range a.Resources {
		data, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

// resource finds the API resource of an object, and its namespace.
func (t *target) resource(u *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := u.GroupVersionKind()
	m, err := t.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		t.mapper.Reset() // a CRD applied a step ago
		m, err = t.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", gvk.Kind, err)
	}
	if m.Scope.Name() == meta.RESTScopeNameRoot {
		return t.dynamic.Resource(m.Resource), nil
	}
	ns := u.GetNamespace()
	if ns == "" {
		ns = "default"
		u.SetNamespace(ns)
	}
	return t.dynamic.Resource(m.Resource).Namespace(ns), nil
}

func (t *target) apply(ctx context.Context, a *v1alpha1.ApplyStep) (string, error) {
	objs, err := objects(a)
	if err != nil {
		return "", err
	}
	var out []string
	for _, u := range objs {
		t.federationNames(u)
		r, err := t.resource(u)
		if err != nil {
			return "", err
		}
		data, err := u.MarshalJSON()
		if err != nil {
			return "", err
		}
		if _, err := r.Patch(ctx, u.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: fieldManager, Force: ptr.To(true)}); err != nil {
			return "", fmt.Errorf("applying %s %s: %w", u.GetKind(), u.GetName(), err)
		}
		out = append(out, strings.ToLower(u.GetKind())+"/"+u.GetName())
	}
	return strings.Join(out, " "), nil
}

// federationNames puts, in a DPDB's federation entries, the name of the
// cluster made for a scenario cluster where the entry names the scenario
// cluster (red): manifests written for clusters called red, blue and green
// work unchanged in a scenario whose clusters get fresh names.
func (t *target) federationNames(u *unstructured.Unstructured) {
	if u.GroupVersionKind().GroupKind() != (schema.GroupKind{Group: policyv1alpha1.GroupName, Kind: policyv1alpha1.Kind}) {
		return
	}
	members, found, err := unstructured.NestedSlice(u.Object, "spec", "federation")
	if !found || err != nil {
		return // the API server's validation will say what is wrong
	}
	for _, m := range members {
		if m, ok := m.(map[string]any); ok {
			if c, ok := m["cluster"].(string); ok && c != "" && t.clusters[c] != "" {
				m["cluster"] = t.clusters[c]
			}
		}
	}
	_ = unstructured.SetNestedSlice(u.Object, members, "spec", "federation")
}

func (t *target) delete(ctx context.Context, a *v1alpha1.ApplyStep) (string, error) {
	objs, err := objects(a)
	if err != nil {
		return "", err
	}
	var out []string
	for _, u := range objs {
		r, err := t.resource(u)
		if err != nil {
			return "", err
		}
		err = r.Delete(ctx, u.GetName(), metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)})
		if err != nil && !apierrors.IsNotFound(err) {
			return "", fmt.Errorf("deleting %s %s: %w", u.GetKind(), u.GetName(), err)
		}
		out = append(out, strings.ToLower(u.GetKind())+"/"+u.GetName())
	}
	return strings.Join(out, " "), nil
}

var workloads = map[string]schema.GroupVersionResource{
	"Deployment":  {Group: "apps", Version: "v1", Resource: "deployments"},
	"ReplicaSet":  {Group: "apps", Version: "v1", Resource: "replicasets"},
	"StatefulSet": {Group: "apps", Version: "v1", Resource: "statefulsets"},
}

func (t *target) scale(ctx context.Context, s *v1alpha1.ScaleStep, timeout time.Duration) (string, error) {
	if s.NodeGroup != nil {
		for i := range t.spec.NodeGroups {
			g := &t.spec.NodeGroups[i]
			if g.Name == *s.NodeGroup {
				names, err := t.scaleGroup(ctx, g, int(s.Replicas))
				if err != nil {
					return "", err
				}
				return fmt.Sprintf("%d nodes", len(names)), t.waitNodesReady(ctx, names, timeout)
			}
		}
		return "", fmt.Errorf("nodeGroup: no node group %q in the cluster", *s.NodeGroup)
	}
	kind := s.Kind
	if kind == "" {
		kind = "Deployment"
	}
	gvr, ok := workloads[kind]
	if !ok {
		return "", fmt.Errorf("kind: %s cannot be scaled here; use Deployment, ReplicaSet or StatefulSet", kind)
	}
	ns := s.Namespace
	if ns == "" {
		ns = "default"
	}
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, s.Replicas)
	_, err := t.dynamic.Resource(gvr).Namespace(ns).Patch(ctx, s.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: fieldManager})
	return fmt.Sprintf("%s/%s to %d", strings.ToLower(kind), s.Name, s.Replicas), err
}

// patchNodes merge-patches each node.
func (t *target) patchNodes(ctx context.Context, ref v1alpha1.NodeRef, patch any) (string, error) {
	names, err := t.nodes(ctx, ref)
	if err != nil {
		return "", err
	}
	data, err := json.Marshal(patch)
	if err != nil {
		return "", err
	}
	for _, n := range names {
		if _, err := t.client.CoreV1().Nodes().Patch(ctx, n, types.MergePatchType, data, metav1.PatchOptions{FieldManager: fieldManager}); err != nil {
			return "", fmt.Errorf("node %s: %w", n, err)
		}
	}
	return strings.Join(names, " "), nil
}

func (t *target) taint(ctx context.Context, s *v1alpha1.TaintStep) (string, error) {
	names, err := t.nodes(ctx, s.Nodes)
	if err != nil {
		return "", err
	}
	for _, n := range names {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			node, err := t.client.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				return err
			}
			var taints []corev1.Taint
			for _, old := range node.Spec.Taints {
				drop := false
				for _, x := range s.Taints {
					drop = drop || (old.Key == x.Key && old.Effect == x.Effect)
				}
				if !drop {
					taints = append(taints, old)
				}
			}
			if !s.Remove {
				taints = append(taints, s.Taints...)
			}
			node.Spec.Taints = taints
			_, err = t.client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{FieldManager: fieldManager})
			return err
		})
		if err != nil {
			return "", fmt.Errorf("node %s: %w", n, err)
		}
	}
	return strings.Join(names, " "), nil
}

func (t *target) setStopped(ctx context.Context, ref v1alpha1.NodeRef, stopped bool) (string, error) {
	names, err := t.nodes(ctx, ref)
	if err != nil {
		return "", err
	}
	for _, n := range names {
		if err := kubeletsim.SetStopped(ctx, t.client, n, stopped); err != nil {
			return "", err
		}
	}
	return strings.Join(names, " "), nil
}

// evictable are the pods on a node a drain evicts: not DaemonSet pods,
// not mirror pods, not finished.
func (t *target) evictable(ctx context.Context, node string) ([]corev1.Pod, error) {
	list, err := t.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || p.DeletionTimestamp != nil {
			continue
		}
		if _, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
			continue
		}
		if c := metav1.GetControllerOf(&p); c != nil && c.Kind == "DaemonSet" {
			continue
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// evict asks the eviction API to evict a pod: nil, a refusal (the budget's
// words), or another error.
func (t *target) evict(ctx context.Context, p corev1.Pod) (refusal string, err error) {
	err = t.client.PolicyV1().Evictions(p.Namespace).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}})
	switch {
	case err == nil, apierrors.IsNotFound(err):
		t.evicted[p.Namespace+"/"+p.Name] = true
		return "", nil
	case apierrors.IsTooManyRequests(err):
		return err.Error(), nil
	}
	return "", err
}

// drain cordons nodes and evicts their pods; see DrainStep.
func (t *target) drain(ctx context.Context, s *v1alpha1.DrainStep, timeout time.Duration) (string, error) {
	names, err := t.nodes(ctx, s.Node)
	if err != nil {
		return "", err
	}
	if _, err := t.patchNodes(ctx, s.Node, map[string]any{"spec": map[string]any{"unschedulable": true}}); err != nil {
		return "", err
	}
	d := &disruption{What: "drain " + strings.Join(names, ",")}
	t.last = d
	made, refused := map[string]bool{}, map[string]string{}
	deadline := time.Now().Add(timeout)
	retry := time.NewTicker(time.Second)
	defer retry.Stop()
	for {
		left := 0
		for _, n := range names {
			pods, err := t.evictable(ctx, n)
			if err != nil {
				return "", err
			}
			for _, p := range pods {
				key := p.Namespace + "/" + p.Name
				if made[key] {
					continue
				}
				msg, err := t.evict(ctx, p)
				if err != nil {
					return "", fmt.Errorf("evicting %s: %w", key, err)
				}
				if msg != "" {
					refused[key] = msg
					left++
				} else {
					made[key] = true
					delete(refused, key)
				}
			}
		}
		d.Made, d.Refused = sortedKeys(made), sortedKeys(refused)
		summary := fmt.Sprintf("%d evicted, %d refused", len(made), len(refused))
		if s.Expect == "blocked" {
			if len(refused) == 0 {
				return summary, fmt.Errorf("expected the drain to be blocked, but every eviction was allowed (%s)", summary)
			}
			return summary, nil
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			return summary, fmt.Errorf("drain did not complete in %s: %s (%s)", timeout, summary, firstValue(refused))
		}
		select {
		case <-ctx.Done():
			return summary, ctx.Err()
		case <-retry.C:
		}
	}
	// Evicted pods take their grace period to go.
	err = t.until(ctx, time.Until(deadline), func() (bool, string) {
		left := 0
		for _, n := range names {
			pods, err := t.evictable(ctx, n)
			if err != nil {
				return false, err.Error()
			}
			left += len(pods)
		}
		return left == 0, fmt.Sprintf("%d pods still on the node", left)
	})
	return fmt.Sprintf("%d evicted", len(made)), err
}

func firstValue(m map[string]string) string {
	for _, k := range sortedKeys(m) {
		return k + ": " + m[k]
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (t *target) evictOne(ctx context.Context, s *v1alpha1.EvictStep) (string, error) {
	ns := s.Namespace
	if ns == "" {
		ns = "default"
	}
	var pod corev1.Pod
	if s.Pod != "" {
		p, err := t.client.CoreV1().Pods(ns).Get(ctx, s.Pod, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		pod = *p
	} else {
		list, err := t.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: s.Selector})
		if err != nil {
			return "", err
		}
		sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
		for _, p := range list.Items {
			if p.DeletionTimestamp == nil {
				pod = p
				break
			}
		}
		if pod.Name == "" {
			return "", fmt.Errorf("no pod matches %s in %s", s.Selector, ns)
		}
	}
	msg, err := t.evict(ctx, pod)
	if err != nil {
		return "", err
	}
	key := pod.Namespace + "/" + pod.Name
	d := &disruption{What: "evict " + key}
	t.last = d
	if msg != "" {
		d.Refused = []string{key}
		if s.Expect != "refused" {
			return "refused " + key, fmt.Errorf("eviction of %s refused: %s", key, msg)
		}
		return "refused " + key, nil
	}
	d.Made = []string{key}
	if s.Expect == "refused" {
		return "evicted " + key, fmt.Errorf("expected the eviction of %s to be refused, but it was allowed", key)
	}
	return "evicted " + key, nil
}

func (t *target) deschedule(ctx context.Context, s *v1alpha1.DescheduleStep) (string, error) {
	policy, err := descheduler.ResolvePolicy(s.Policy, s.Profiles, descheduler.PolicyFields{Policy: "policy", Profiles: "profiles"})
	if err != nil {
		return "", err
	}
	report, err := descheduler.Run(ctx, descheduler.Options{Config: t.cfg, Policy: policy, DryRun: s.DryRun})
	if err != nil {
		return "", err
	}
	d := &disruption{What: "deschedule"}
	if s.DryRun {
		d.What = "deschedule (dry run)"
	}
	for _, e := range report.Evictions {
		key := e.Namespace + "/" + e.Pod
		switch e.Result {
		case descheduler.Evicted, descheduler.WouldEvict:
			d.Made = append(d.Made, key)
			if e.Result == descheduler.Evicted {
				t.evicted[key] = true
			}
		default:
			d.Refused = append(d.Refused, key)
		}
	}
	t.last = d
	verb := "evicted"
	if s.DryRun {
		verb = "would evict"
	}
	return fmt.Sprintf("%s %d, refused %d", verb, len(d.Made), len(d.Refused)), nil
}

// kubectl runs kubesim's embedded kubectl in a child process (kubectl
// exits its process on an error).
func (t *target) kubectl(ctx context.Context, home string, args []string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, self, append([]string{"kubectl", "--name", t.name}, args...)...)
	cmd.Env = append(os.Environ(), "KUBESIM_HOME="+home)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %v: %s", strings.Join(args, " "), err, oneLine(string(out)))
	}
	return string(out), nil
}
