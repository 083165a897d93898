package supervisor

import (
	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/component"
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
