package v1alpha1

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

func TestDefaultsAreValid(t *testing.T) {
	c := &Cluster{}
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
	if c.Name != DefaultClusterName || c.NodeLifecycle.NodeMonitorGracePeriod == nil {
		t.Errorf("defaults not set: %+v", c)
	}
}

func TestValidateNamesTheField(t *testing.T) {
	for _, tc := range []struct {
		change func(*Cluster)
		want   string
	}{
		{func(c *Cluster) { c.Name = "Bad_Name" }, "must be a DNS label"},
		{func(c *Cluster) { c.Networking.APIServerPort = -1 }, "networking.apiServerPort"},
		{func(c *Cluster) { c.Networking.PodSubnet = "10.0.0.0/25" }, "networking.podSubnet"},
		{func(c *Cluster) { c.Networking.PodSubnet = "nonsense" }, "networking.podSubnet"},
		{func(c *Cluster) { c.Networking.ServiceSubnet = "10.0.0.0/24" }, "overlaps networking.podSubnet"},
		{func(c *Cluster) { c.Networking.NodeSubnet = "10.96.0.0/16" }, "networking.nodeSubnet"},
		{func(c *Cluster) { c.TimeScale = -1 }, "timeScale (--time-scale): must be a whole number from 1 (real time) to 1000, got -1"},
		{func(c *Cluster) { c.TimeScale = 1001 }, "timeScale (--time-scale): must be a whole number from 1 (real time) to 1000, got 1001"},
		{func(c *Cluster) { c.Nodes = -1 }, "nodes (--nodes): must be between 0 and 1000000, got -1"},
		{func(c *Cluster) { c.Nodes = 1_000_001 }, "nodes (--nodes): must be between 0 and 1000000, got 1000001"},
		{func(c *Cluster) { c.Nodes = 2_000_000_000 }, "nodes (--nodes): must be between 0 and 1000000"},
		{func(c *Cluster) { c.NodeLifecycle.NodeMonitorPeriod.Duration = 0 }, "nodeLifecycle.nodeMonitorPeriod"},
		{func(c *Cluster) { c.NodeLifecycle.NodeMonitorGracePeriod.Duration = time.Second }, "nodeLifecycle.nodeMonitorGracePeriod"},
		{func(c *Cluster) { m := resource.MustParse("-1Gi"); c.MemoryLimit = &m }, "memoryLimit: must be a size such as 2Gi"},
		{func(c *Cluster) { *c.Usage.DefaultRequestPercent = -5 }, "usage.defaultRequestPercent: -5 is negative"},
		{func(c *Cluster) { c.HorizontalPodAutoscaler.SyncPeriod.Duration = 0 }, "horizontalPodAutoscaler.syncPeriod (--horizontal-pod-autoscaler-sync-period): must be a positive duration"},
		{func(c *Cluster) { c.HorizontalPodAutoscaler.DownscaleStabilization.Duration = -time.Second }, "horizontalPodAutoscaler.downscaleStabilization"},
	} {
		c := &Cluster{}
		c.SetDefaults()
		tc.change(c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate() = %v, want error containing %q", err, tc.want)
		}
	}
}

func TestDeepCopySharesNothing(t *testing.T) {
	pct := int32(10)
	c := &Cluster{
		Status: &ClusterStatus{Ports: Ports{{Component: "kube-apiserver", Port: 6443}}},
		ClusterSpec: ClusterSpec{
			Scheduler:   Scheduler{PercentageOfNodesToScore: &pct},
			Descheduler: Descheduler{Profiles: []string{"LongLifecycle"}},
		},
	}
	c.SetDefaults()
	d := c.DeepCopy()
	d.Status.Ports[0].Port = 1
	d.NodeLifecycle.NodeMonitorPeriod.Duration = time.Hour
	*d.Scheduler.PercentageOfNodesToScore = 50
	d.Descheduler.Profiles[0] = "CompactAndScale"
	d.Descheduler.Interval.Duration = time.Hour
	d.MemoryLimit.Set(1)
	if c.Status.Ports[0].Port == 1 || c.NodeLifecycle.NodeMonitorPeriod.Duration == time.Hour ||
		pct != 10 || c.Descheduler.Profiles[0] != "LongLifecycle" || c.Descheduler.Interval.Duration == time.Hour ||
		c.MemoryLimit.Cmp(DefaultMemoryLimit) != 0 {
		t.Error("DeepCopy shares memory with the original")
	}
}

// A time scale given is 1 or more: 0, though the field's "not set", is
// refused where a user gives it (--time-scale 0, timeScale: 0) as -1 is.
func TestCheckTimeScaleRefusesZero(t *testing.T) {
	for n, ok := range map[int32]bool{-1: false, 0: false, 1: true, MaxTimeScale: true, MaxTimeScale + 1: false} {
		if err := CheckTimeScale(n); (err == nil) != ok {
			t.Errorf("CheckTimeScale(%d) = %v, want ok %v", n, err, ok)
		}
	}
}
