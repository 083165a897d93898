package v1alpha1

import "time"

// NodeLeaseRenewInterval is how often kubelet-sim renews a node's Lease:
// twice in the node-monitor grace period — Lease renewals are most of a
// big idle cluster's writes — or, on a scaled clock, whose point is
// upstream's timings, every fifth of it, as a kubelet does (10 s of
// upstream's 50 s). The controller-manager can judge a node dead no
// sooner than the grace period less this after its last renewal.
func (c *Cluster) NodeLeaseRenewInterval() time.Duration {
	grace := c.NodeLifecycle.NodeMonitorGracePeriod.Duration
	if c.TimeScale > 1 {
		return grace / 5
	}
	return grace / 2
}
