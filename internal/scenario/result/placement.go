package result

import (
	"fmt"
	"maps"
	"slices"
	"strings"
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
	// Devices are the node's DRA devices by driver, those allocated to
	// claims and all it publishes.
	Devices []DeviceUse `json:"devices,omitempty"`
}

// DeviceUse counts a node's devices of one driver.
type DeviceUse struct {
	Driver string `json:"driver"`
	Used   int    `json:"used"`
	Total  int    `json:"total"`
}

// DevicesText is n's devices as "driver used/total, …"; "" without any.
func (n *NodeMark) DevicesText() string {
	var parts []string
	for _, d := range n.Devices {
		parts = append(parts, fmt.Sprintf("%s %d/%d", d.Driver, d.Used, d.Total))
	}
	return strings.Join(parts, ", ")
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
			devices := ""
			if d := n.DevicesText(); d != "" {
				devices = " [devices in use: " + d + "]"
			}
			fmt.Fprintf(&b, "    %-16s%s %s%s\n", n.Name, state, pl.counts(n.Pods), devices)
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
	for _, w := range slices.Sorted(maps.Keys(n)) {
		parts = append(parts, fmt.Sprintf("%s×%d", w, n[w]))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}
