package scenario

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesim/kubesim/internal/explain"
)

// Placement is where a cluster's pods were at one moment: what the report
// draws and what a failed assertion prints.
type Placement struct {
	// Key is the topology key nodes are grouped by ("" for none).
	Key     string       `json:"key"`
	Domains []Domain     `json:"domains"`
	Pending []PodMark    `json:"pending"`
	Evicted []PodMark    `json:"evicted"`
	Colors  []WorkloadID `json:"workloads"`
}

// Domain is the nodes sharing a value of the topology key.
type Domain struct {
	Value string     `json:"value"`
	Nodes []NodeMark `json:"nodes"`
}

// NodeMark is a node and its pods.
type NodeMark struct {
	Name          string    `json:"name"`
	Ready         bool      `json:"ready"`
	Unschedulable bool      `json:"unschedulable"`
	Tainted       bool      `json:"tainted"`
	Pods          []PodMark `json:"pods"`
}

// PodMark is a pod and its workload (the index of its colour).
type PodMark struct {
	Name     string `json:"name"`
	Workload int    `json:"workload"`
	Phase    string `json:"phase"`
}

// WorkloadID names a workload.
type WorkloadID struct {
	Name string `json:"name"`
}

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

func (v *view) placement(key string) *Placement {
	if key == "" {
		for _, n := range v.nodes {
			if _, ok := n.Labels[zoneKey]; ok {
				key = zoneKey
				break
			}
		}
	}
	pl := &Placement{Key: key}
	ids := map[string]int{}
	id := func(p *corev1.Pod) int {
		w := workload(p)
		if i, ok := ids[w]; ok {
			return i
		}
		ids[w] = len(pl.Colors)
		pl.Colors = append(pl.Colors, WorkloadID{Name: w})
		return ids[w]
	}
	byNode := map[string][]PodMark{}
	sort.Slice(v.pods, func(i, j int) bool { return v.pods[i].Name < v.pods[j].Name })
	for i := range v.pods {
		p := &v.pods[i]
		if p.Namespace == "kube-system" {
			continue
		}
		m := PodMark{Name: p.Name, Workload: id(p), Phase: string(p.Status.Phase)}
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
		pl.Evicted = append(pl.Evicted, PodMark{Name: key, Workload: -1, Phase: "Evicted"})
	}
	domains := map[string]*Domain{}
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
			d = &Domain{Value: value}
			domains[value] = d
			order = append(order, value)
		}
		tainted := false
		for _, t := range n.Spec.Taints {
			tainted = tainted || t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
		}
		d.Nodes = append(d.Nodes, NodeMark{Name: n.Name, Ready: nodeReady(n), Unschedulable: n.Spec.Unschedulable, Tainted: tainted, Pods: byNode[n.Name]})
	}
	sort.Strings(order)
	for _, value := range order {
		pl.Domains = append(pl.Domains, *domains[value])
	}
	return pl
}

// Table prints the placement as text: one line per node, its pods
// counted by workload.
func (pl *Placement) Table() string {
	var b strings.Builder
	for _, d := range pl.Domains {
		if pl.Key != "" {
			fmt.Fprintf(&b, "  %s=%s\n", pl.Key, d.Value)
		}
		for _, n := range d.Nodes {
			var marks []string
			if !n.Ready {
				marks = append(marks, "NotReady")
			}
			if n.Unschedulable {
				marks = append(marks, "cordoned")
			}
			if n.Tainted {
				marks = append(marks, "tainted")
			}
			state := ""
			if len(marks) > 0 {
				state = " (" + strings.Join(marks, ",") + ")"
			}
			fmt.Fprintf(&b, "    %-16s%s %s\n", n.Name, state, pl.counts(n.Pods))
		}
	}
	if len(pl.Pending) > 0 {
		fmt.Fprintf(&b, "    %-16s %s\n", "(pending)", pl.counts(pl.Pending))
	}
	return b.String()
}

func (pl *Placement) counts(pods []PodMark) string {
	n := map[string]int{}
	for _, p := range pods {
		n[pl.Colors[p.Workload].Name]++
	}
	var parts []string
	for _, w := range sortedKeys(n) {
		parts = append(parts, fmt.Sprintf("%s×%d", w, n[w]))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
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
