package supervisor

import (
	"strconv"

	"github.com/kubesim/kubesim/internal/clusterclock"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/component"
	"github.com/kubesim/kubesim/internal/membudget"
)

// memoryShare is a component's part of the cluster's memoryLimit, in
// bytes: 0 without a limit. The MemoryWeights of the components the
// cluster runs (what each holds at 10,000 pods: the API server its watch
// caches, etcd mostly a memory-mapped file the budget does not count) are
// scaled to the whole limit.
func memoryShare(comp component.Component, all []component.Component, c *v1alpha1.Cluster) int64 {
	if c.MemoryLimit == nil || c.MemoryLimit.Sign() <= 0 {
		return 0
	}
	var total int64
	for _, other := range all {
		if other.IsEnabled(c) {
			total += other.MemoryWeight
		}
	}
	if total == 0 {
		return 0
	}
	return c.MemoryLimit.Value() / total * comp.MemoryWeight
}

// componentEnv is a component's environment: kubesim's own (processEnv),
// its GOGC, its memory share, and the cluster's clock (the supervisor
// itself keeps real time: its waits are for real work).
func componentEnv(comp component.Component, all []component.Component, c *v1alpha1.Cluster) []string {
	gogc := gcPercent
	if comp.GCPercent != "" {
		gogc = comp.GCPercent
	}
	env := processEnv(gogc)
	if share := memoryShare(comp, all, c); share > 0 {
		env = append(env, membudget.EnvVar+"="+strconv.FormatInt(share, 10))
	}
	if c.Status != nil {
		env = append(env, clusterclock.Env(c.Status.Clock)...)
	}
	return env
}
