package dpdb

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	policyv1alpha1 "github.com/kubesim/kubesim/apis/policy/v1alpha1"
)

// verdict is the webhook's answer to one eviction: allowed, or refused and
// why. Its zero value refuses, as the webhook fails closed.
type verdict struct {
	allowed bool
	reason  string // why it is refused
}

var allow = verdict{allowed: true}

func refuse(reason string) verdict { return verdict{reason: reason} }

// admitEviction decides an eviction of a pod that DPDBs cover: under the
// federation's lock, with the members' live PDB status. An admitted
// eviction keeps the lock until the pod's child PDB counts it out, so no
// neighbour's check can miss it.
func (wh *webhook) admitEviction(ctx context.Context, namespace, name string, dryRun bool) verdict {
	pod, err := wh.client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return allow // the API server answers for a pod that is not there
	}
	if !podHealthy(pod) {
		return allow // an unhealthy pod spends no budget
	}
	dpdbs := wh.covering(pod)
	if len(dpdbs) == 0 {
		return allow
	}
	// The lock: this cluster's, and every cluster the DPDBs federate.
	targets := []lockTarget{{cluster: wh.opts.ClusterName, client: wh.client}}
	seen := map[string]bool{wh.opts.ClusterName: true}
	for _, d := range dpdbs {
		for _, m := range resolveMembers(d, wh.opts.ClusterName) {
			if m.Cluster == "" || seen[m.Cluster] {
				continue
			}
			seen[m.Cluster] = true
			client, why := wh.members.client(m.Cluster)
			if client == nil {
				return refuse(fmt.Sprintf("DistributedPodDisruptionBudget %s/%s: member %s: %s", d.Namespace, d.Name, m, why))
			}
			targets = append(targets, lockTarget{cluster: m.Cluster, client: client})
		}
	}
	start := time.Now()
	var lock *federationLock
	if !dryRun {
		holder := wh.opts.ClusterName + "/" + namespace + "/" + name + "/" + string(uuid.NewUUID())
		if lock, err = acquireAll(ctx, wh.opts.Namespace, holder, targets); err != nil {
			return refuse("the federation's eviction lock is busy: " + err.Error())
		}
	}
	var ownBefore []int32
	for _, d := range dpdbs {
		healthy, v := wh.checkLive(ctx, d)
		if !v.allowed {
			if lock != nil {
				lock.release(context.WithoutCancel(ctx))
			}
			return v
		}
		ownBefore = append(ownBefore, healthy)
	}
	if lock != nil {
		klog.InfoS("eviction admitted", "pod", namespace+"/"+name, "lockAndCheck", time.Since(start))
		go wh.hold(context.WithoutCancel(ctx), lock, dpdbs, ownBefore, pod)
	}
	return allow
}

// checkLive reads the DPDB's child and members now (not from the watch)
// and returns the child's healthy pods, or refuses: the eviction must wait.
func (wh *webhook) checkLive(ctx context.Context, d *policyv1alpha1.DistributedPodDisruptionBudget) (int32, verdict) {
	what := fmt.Sprintf("DistributedPodDisruptionBudget %s/%s", d.Namespace, d.Name)
	child, err := wh.client.PolicyV1().PodDisruptionBudgets(d.Namespace).Get(ctx, d.Name, metav1.GetOptions{})
	if err != nil {
		return 0, refuse(fmt.Sprintf("%s: child PDB: %v", what, err))
	}
	own, msg := observe(child)
	if !own.Sure {
		return 0, refuse(fmt.Sprintf("%s: child PDB %s", what, msg))
	}
	var obs []Observation
	var unsure []string
	for _, m := range resolveMembers(d, wh.opts.ClusterName) {
		client := wh.client
		if m.Cluster != "" {
			var why string
			if client, why = wh.members.client(m.Cluster); client == nil {
				unsure = append(unsure, m.String()+": "+why)
				obs = append(obs, Observation{})
				continue
			}
		}
		o, why := readLive(ctx, client, m)
		if !o.Sure {
			unsure = append(unsure, m.String()+": "+why)
		}
		obs = append(obs, o)
	}
	if len(unsure) > 0 {
		return 0, refuse(fmt.Sprintf("%s: refusing while a member cannot be read: %s", what, strings.Join(unsure, "; ")))
	}
	b, err := Compute(d.Spec, own, obs)
	if err != nil {
		return 0, refuse(fmt.Sprintf("%s: %v", what, err))
	}
	if b.Allowed(own.Healthy) < 1 {
		return 0, refuse(fmt.Sprintf("%s: the federation allows no disruption now (%d healthy of %d required)",
			what, own.Healthy+b.MembersHealthy, b.Required))
	}
	return own.Healthy, allow
}

func readLive(ctx context.Context, client kubernetes.Interface, m member) (Observation, string) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	pdb, err := client.PolicyV1().PodDisruptionBudgets(m.Namespace).Get(ctx, m.Name, metav1.GetOptions{})
	if err != nil {
		return Observation{}, err.Error()
	}
	return observe(pdb)
}

// hold keeps the lock until every DPDB's child shows the eviction (fewer
// healthy pods than before, or the pod gone or terminating), or
// holdTimeout passes (the API server may have refused the eviction after
// all), then releases it.
func (wh *webhook) hold(ctx context.Context, lock *federationLock, dpdbs []*policyv1alpha1.DistributedPodDisruptionBudget, before []int32, pod *corev1.Pod) {
	defer lock.release(ctx)
	deadline := time.Now().Add(holdTimeout)
	for time.Now().Before(deadline) {
		shown := true
		for i, d := range dpdbs {
			child, err := wh.client.PolicyV1().PodDisruptionBudgets(d.Namespace).Get(ctx, d.Name, metav1.GetOptions{})
			if err != nil || !countedOut(child, before[i]) {
				shown = false
				break
			}
		}
		if shown {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	klog.InfoS("released the eviction lock on timeout", "pod", pod.Namespace+"/"+pod.Name)
}

// countedOut reports whether the child has counted one pod fewer healthy.
func countedOut(child *policyv1.PodDisruptionBudget, before int32) bool {
	return child.Status.CurrentHealthy < before
}

// covering lists the DPDBs whose selector matches the pod.
func (wh *webhook) covering(pod *corev1.Pod) []*policyv1alpha1.DistributedPodDisruptionBudget {
	objs, _ := wh.dpdbs.ByIndex(cache.NamespaceIndex, pod.Namespace)
	var out []*policyv1alpha1.DistributedPodDisruptionBudget
	for _, obj := range objs {
		d, err := asDPDB(obj)
		if err != nil || d.Spec.Selector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b *policyv1alpha1.DistributedPodDisruptionBudget) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func podHealthy(pod *corev1.Pod) bool {
	if pod.DeletionTimestamp != nil || pod.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
