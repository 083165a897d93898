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

// componentEnv is processEnv with the component's memory share.
func componentEnv(name string, c *v1alpha1.Cluster) []string {
	env := processEnv()
	if share := memoryShare(name, c); share > 0 {
		env = append(env, membudget.EnvVar+"="+strconv.FormatInt(share, 10))
	}
	return env
}
