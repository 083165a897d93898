package v1alpha1

import (
	"strings"
	"testing"
)

func TestNodeCIDRMaskFor(t *testing.T) {
	for _, tc := range []struct {
		pods int64
		want int
	}{
		{0, 22},    // the default: 1,022 addresses hold 1,000 pods
		{110, 22},  // the default node's capacity: still the 1,000 floor
		{1000, 22}, // exactly the floor
		{1022, 22}, // exactly a /22's usable addresses
		{1023, 21}, // one more
		{1500, 21}, // 2,046 addresses
		{4094, 20},
		{100000, 15},
		{1 << 40, MinNodeCIDRMaskSize},
	} {
		got := NodeCIDRMaskFor(tc.pods)
		if got != tc.want {
			t.Errorf("NodeCIDRMaskFor(%d) = /%d, want /%d", tc.pods, got, tc.want)
		}
		if got > MinNodeCIDRMaskSize && NodeCIDRAddresses(got) < max(tc.pods, DefaultPodsPerNode) {
			t.Errorf("/%d holds %d addresses, fewer than %d pods", got, NodeCIDRAddresses(got), tc.pods)
		}
	}
}

// Clusters made before kubesim kept the mask had /24s.
func TestNodeCIDRMaskOfOlderClusters(t *testing.T) {
	if got := (&Cluster{}).NodeCIDRMask(); got != 24 {
		t.Errorf("no status: /%d, want /24", got)
	}
	if got := (&Cluster{Status: &ClusterStatus{}}).NodeCIDRMask(); got != 24 {
		t.Errorf("status without a mask: /%d, want /24", got)
	}
	if got := (&Cluster{Status: &ClusterStatus{NodeCIDRMaskSize: 21}}).NodeCIDRMask(); got != 21 {
		t.Errorf("status /21: /%d", got)
	}
}

// The defaults hold the 10,000 nodes kubesim's benchmarks make, with a
// /22 each, and ranges that do not overlap.
func TestDefaultRangesHoldTenThousandNodes(t *testing.T) {
	c := &Cluster{ClusterSpec: ClusterSpec{Nodes: 16384}}
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if n, _ := NodeCIDRs(c.Networking.PodSubnet, 22); n != 16384 {
		t.Errorf("default pod subnet holds %d /22s, want 16384", n)
	}
	c.Nodes = 16385
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "networking.podSubnet: 10.0.0.0/8 holds 16384") {
		t.Errorf("16,385 nodes: %v", err)
	}
}

func TestNodeAddressesAreOneLineNamingTheField(t *testing.T) {
	for _, tc := range []struct {
		change func(*Cluster)
		want   string
	}{
		{func(c *Cluster) { c.Nodes, c.Networking.PodSubnet = 4, "10.244.0.0/23" },
			"networking.podSubnet: 10.244.0.0/23 is smaller than one of the cluster's /22 node CIDRs (1022 pods each); give a /22 or larger (--pod-subnet)"},
		{func(c *Cluster) { c.Nodes, c.Networking.PodSubnet = 4, "10.244.0.0/21" },
			"networking.podSubnet: 10.244.0.0/21 holds 2 /22 node CIDRs (1022 pods each), fewer than the 4 nodes; give a larger --pod-subnet (a /20 holds them) or fewer nodes"},
		{func(c *Cluster) {
			c.NodeGroups = []NodeGroup{{Name: "a", Count: 3}, {Name: "b", Count: 2}}
			c.Networking.PodSubnet, c.Networking.NodeCIDRMaskSize = "10.244.0.0/22", 24
		}, "networking.podSubnet: 10.244.0.0/22 holds 4 /24 node CIDRs (254 pods each), fewer than the 5 nodes"},
		{func(c *Cluster) { c.Networking.NodeCIDRMaskSize = 31 }, "networking.nodeCIDRMaskSize: must be between 8 and 30"},
		{func(c *Cluster) { c.Networking.NodeCIDRMaskSize = 26 }, "networking.podSubnet: 10.0.0.0/8 cut into /26 node CIDRs"},
		{func(c *Cluster) { c.Nodes, c.Networking.NodeSubnet = 3, "192.168.0.0/30" },
			"networking.nodeSubnet: 192.168.0.0/30 holds 2 node addresses, fewer than the 3 nodes"},
		{func(c *Cluster) { c.Networking.NodeSubnet = "10.64.0.0/12" }, "networking.nodeSubnet: 10.64.0.0/12 overlaps networking.podSubnet 10.0.0.0/8"},
		{func(c *Cluster) { c.Networking.NodeSubnet = "172.16.0.0/16" }, "networking.nodeSubnet: 172.16.0.0/16 overlaps networking.serviceSubnet 172.16.0.0/12"},
		{func(c *Cluster) { c.Networking.ServiceSubnet = "10.96.0.0/12" }, "networking.serviceSubnet: 10.96.0.0/12 overlaps networking.podSubnet 10.0.0.0/8"},
	} {
		c := &Cluster{}
		c.SetDefaults()
		tc.change(c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate() = %v, want error containing %q", err, tc.want)
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("Validate() = %q: more than one line", err)
		}
	}
	// Older clusters' ranges stay valid.
	c := &Cluster{ClusterSpec: ClusterSpec{Nodes: 16384, Networking: Networking{PodSubnet: "10.0.0.0/10", ServiceSubnet: "10.96.0.0/12", NodeSubnet: "10.64.0.0/12"}},
		Status: &ClusterStatus{}}
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		t.Errorf("the ranges of clusters made before: %v", err)
	}
}
