package scenario

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesim/kubesim/internal/explain"
	"github.com/kubesim/kubesim/internal/scenario/result"
)

// workload is the name of what made a pod: its Deployment (the
// ReplicaSet's name less its hash), other controller, or for a bare pod
// its app label, else the pod itself.
func workload(p *corev1.Pod) string {
	c := metav1.GetControllerOf(p)
	if c == nil {
		for _, k := range []string{"app.kubernetes.io/name", "app"} {
			if v := p.Labels[k]; v != "" {
				return v
			}
		}
		return p.Name
	}
	if c.Kind == "ReplicaSet" {
		if h := p.Labels["pod-template-hash"]; h != "" {
			return strings.TrimSuffix(c.Name, "-"+h)
		}
	}
	return c.Name
}

// zoneKey is the topology key pictures group by unless told otherwise.
const zoneKey = "topology.kubernetes.io/zone"

func (v *view) placement(key string) *result.Placement {
	if key == "" {
		for _, n := range v.nodes {
			if _, ok := n.Labels[zoneKey]; ok {
				key = zoneKey
				break
			}
		}
	}
	pl := &result.Placement{Key: key}
	ids := map[string]int{}
	id := func(p *corev1.Pod) int {
		w := workload(p)
		if i, ok := ids[w]; ok {
			return i
		}
		ids[w] = len(pl.Colors)
		pl.Colors = append(pl.Colors, result.WorkloadID{Name: w})
		return ids[w]
	}
	byNode := map[string][]result.PodMark{}
	sort.Slice(v.pods, func(i, j int) bool { return v.pods[i].Name < v.pods[j].Name })
	for i := range v.pods {
		p := &v.pods[i]
		if p.Namespace == "kube-system" {
			continue
		}
		m := result.PodMark{Name: p.Name, Workload: id(p), Phase: string(p.Status.Phase)}
		if p.DeletionTimestamp != nil {
			m.Phase = "Terminating"
		}
		if p.Spec.NodeName == "" {
			pl.Pending = append(pl.Pending, m)
		} else {
			byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], m)
		}
	}
	for _, key := range sortedKeys(v.t.evicted) {
		pl.Evicted = append(pl.Evicted, result.PodMark{Name: key, Workload: -1, Phase: "Evicted"})
	}
	devices := v.devicesByNode()
	domains := map[string]*result.Domain{}
	var order []string
	for i := range v.nodes {
		n := &v.nodes[i]
		value := "(all nodes)"
		if key != "" {
			value = n.Labels[key]
			if value == "" {
				value = "(no " + key + ")"
			}
		}
		d := domains[value]
		if d == nil {
			d = &result.Domain{Value: value}
			domains[value] = d
			order = append(order, value)
		}
		tainted := false
		for _, t := range n.Spec.Taints {
			tainted = tainted || t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
		}
		d.Nodes = append(d.Nodes, result.NodeMark{Name: n.Name, Ready: nodeReady(n), Unschedulable: n.Spec.Unschedulable, Tainted: tainted, Pods: byNode[n.Name],
			Devices: devices[n.Name]})
	}
	sort.Strings(order)
	for _, value := range order {
		pl.Domains = append(pl.Domains, *domains[value])
	}
	return pl
}

// maxExplained bounds how many Pending pods a report explains per picture.
const maxExplained = 5

// explainPending asks the scheduler why the first Pending pods are
// Pending, for the report; a pod it cannot explain is left out.
func (v *view) explainPending(max int) []*explain.Explanation {
	if v.t.explainer == nil {
		return nil
	}
	var out []*explain.Explanation
	for _, p := range v.pods {
		if len(out) == max {
			break
		}
		if p.Spec.NodeName != "" || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodPending {
			continue
		}
		e, err := v.t.explainer.Pod(v.ctx, p.Namespace, p.Name)
		if err == nil && e.UID == string(p.UID) && e.Result != explain.Scheduled {
			out = append(out, e)
		}
	}
	return out
}

// devicesByNode counts each node's DRA devices by driver: those its
// ResourceSlices publish and those of them allocated to claims.
func (v *view) devicesByNode() map[string][]result.DeviceUse {
	if len(v.slices) == 0 {
		return nil
	}
	type poolKey struct{ driver, pool string }
	nodeOf := map[poolKey]string{}
	total := map[string]map[string]int{}
	for _, s := range v.slices {
		if s.Spec.NodeName == nil {
			continue // not a node's own pool
		}
		node := *s.Spec.NodeName
		nodeOf[poolKey{s.Spec.Driver, s.Spec.Pool.Name}] = node
		if total[node] == nil {
			total[node] = map[string]int{}
		}
		total[node][s.Spec.Driver] += len(s.Spec.Devices)
	}
	used := map[string]map[string]int{}
	seen := map[string]bool{}
	for _, c := range v.claims {
		if c.Status.Allocation == nil {
			continue
		}
		for _, r := range c.Status.Allocation.Devices.Results {
			node, ok := nodeOf[poolKey{r.Driver, r.Pool}]
			key := r.Driver + "/" + r.Pool + "/" + r.Device
			if !ok || seen[key] {
				continue // shared or admin access: counted once
			}
			seen[key] = true
			if used[node] == nil {
				used[node] = map[string]int{}
			}
			used[node][r.Driver]++
		}
	}
	out := map[string][]result.DeviceUse{}
	for node, drivers := range total {
		for _, driver := range sortedKeys(drivers) {
			out[node] = append(out[node], result.DeviceUse{Driver: driver, Used: used[node][driver], Total: drivers[driver]})
		}
	}
	return out
}
