package controlplane

import (
	"strconv"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/membudget"
)

// memoryWeights share the cluster's memoryLimit among its components, by
// what each holds at 10,000 pods: the API server its watch caches, etcd
// mostly a memory-mapped file the budget does not count.
var memoryWeights = map[string]int64{
	KubeAPIServer:         45,
	KubeControllerManager: 15,
	KubeScheduler:         15,
	Etcd:                  10,
	KubeletSim:            10,
	DPDBController:        5,
	Descheduler:           5,
}

// memoryShare is a component's part of the cluster's memoryLimit, in
// bytes: 0 without a limit. The weights of the components the cluster
// runs are scaled to the whole limit.
func memoryShare(name string, c *v1alpha1.Cluster) int64 {
	if c.MemoryLimit == nil || c.MemoryLimit.Sign() <= 0 {
		return 0
	}
	var total int64
	for _, comp := range Components() {
		if comp.Enabled(c) {
			total += memoryWeights[comp.Name]
		}
	}
	if total == 0 {
		return 0
	}
	return c.MemoryLimit.Value() / total * memoryWeights[name]
}

// componentEnv is processEnv with the component's GOGC and memory share.
func componentEnv(name string, c *v1alpha1.Cluster) []string {
	gogc := gcPercent
	if name == Etcd {
		gogc = etcdGCPercent
	}
	env := processEnv(gogc)
	if share := memoryShare(name, c); share > 0 {
		env = append(env, membudget.EnvVar+"="+strconv.FormatInt(share, 10))
	}
	return env
}

// etcdGCPercent is etcd's GOGC, upstream's default: its live heap is a few
// tens of MB and collecting it is cheap (5 % of its CPU at 10,000 pods),
// so the room GOGC=400 would grow its heap to is memory spent for little
// CPU saved (measured: 50 MiB less RSS after the side-by-side run, for
// 1–2 CPU-s more of etcd's).
const etcdGCPercent = "100"
