package v1alpha1

import (
	"fmt"
	"math/bits"
	"net"
)

// DefaultPodsPerNode is how many pods a node's pod CIDR holds at least,
// whatever the nodes declare: users load-test dense nodes.
const DefaultPodsPerNode = 1000

// The node CIDR prefix lengths kubesim takes: a /8 holds 16,777,214 pods,
// a /30 two.
const (
	MinNodeCIDRMaskSize = 8
	MaxNodeCIDRMaskSize = 30
)

// LegacyNodeCIDRMaskSize is the node CIDR of clusters made before kubesim
// chose it per cluster.
const LegacyNodeCIDRMaskSize = 24

// maxNodeCIDRBits is how many more bits than the pod subnet's a node CIDR
// may have: kube-controller-manager's node IPAM refuses more (65,536 node
// CIDRs at most).
const maxNodeCIDRBits = 16

// NodeCIDRMaskFor is the prefix length of the smallest CIDR whose usable
// addresses (all but the network and broadcast ones) hold pods, and at
// least DefaultPodsPerNode: a /22 (1,022) unless pods is larger.
func NodeCIDRMaskFor(pods int64) int {
	need := max(pods, DefaultPodsPerNode) + 2
	// The host bits needed: the bit length of need-1 (need a power of two
	// takes exactly that many).
	hostBits := bits.Len64(uint64(need - 1))
	return max(32-hostBits, MinNodeCIDRMaskSize)
}

// NodeCIDRAddresses is how many pod addresses a node CIDR of this prefix
// length holds.
func NodeCIDRAddresses(mask int) int64 {
	return int64(1)<<(32-mask) - 2
}

// NodeCIDRMask is the prefix length of the cluster's node CIDRs: the one
// chosen at create, or 24 for a cluster made before kubesim kept it.
func (c *Cluster) NodeCIDRMask() int {
	if c.Status != nil && c.Status.NodeCIDRMaskSize != 0 {
		return c.Status.NodeCIDRMaskSize
	}
	return LegacyNodeCIDRMaskSize
}

// MinNodeCIDRMask is the prefix length of the smallest node CIDR the
// config can have: a made cluster's own (NodeCIDRMask), else
// networking.nodeCIDRMaskSize if set, else the one holding
// DefaultPodsPerNode (node templates may ask for larger ones).
func (c *Cluster) MinNodeCIDRMask() int {
	if c.Status != nil {
		return c.NodeCIDRMask()
	}
	if m := c.Networking.NodeCIDRMaskSize; m != 0 {
		return m
	}
	return NodeCIDRMaskFor(0)
}

// NodeCIDRs is how many node CIDRs of prefix length mask the pod subnet
// holds (0 if it is smaller than one).
func NodeCIDRs(podSubnet string, mask int) (int, error) {
	_, n, err := net.ParseCIDR(podSubnet)
	if err != nil {
		return 0, err
	}
	ones, _ := n.Mask.Size()
	if ones > mask {
		return 0, nil
	}
	return 1 << min(mask-ones, 30), nil
}

// CheckNodeAddresses checks that nodes nodes fit the cluster's ranges: a
// node CIDR of prefix length mask each in networking.podSubnet, and an
// InternalIP each in networking.nodeSubnet. The one-line error names the
// field and the fix.
func (c *Cluster) CheckNodeAddresses(nodes, mask int) error {
	_, podNet, err := net.ParseCIDR(c.Networking.PodSubnet)
	if err != nil {
		return fmt.Errorf("networking.podSubnet: %q is not an IPv4 CIDR such as %s", c.Networking.PodSubnet, DefaultPodSubnet)
	}
	ones, _ := podNet.Mask.Size()
	size := fmt.Sprintf("/%d node CIDRs (%d pods each)", mask, NodeCIDRAddresses(mask))
	if ones > mask {
		return fmt.Errorf("networking.podSubnet: %s is smaller than one of the cluster's %s; give a /%d or larger (--pod-subnet)", podNet, size, mask)
	}
	if mask-ones > maxNodeCIDRBits {
		return fmt.Errorf("networking.podSubnet: %s cut into %s makes more than kube-controller-manager's 65,536; give a /%d or smaller, or a smaller networking.nodeCIDRMaskSize", podNet, size, mask-maxNodeCIDRBits)
	}
	if held, _ := NodeCIDRs(podNet.String(), mask); nodes > held {
		return fmt.Errorf("networking.podSubnet: %s holds %d %s, fewer than the %d nodes; give a larger --pod-subnet (a /%d holds them) or fewer nodes",
			podNet, held, size, nodes, mask-bits.Len(uint(nodes-1)))
	}
	_, nodeNet, err := net.ParseCIDR(c.Networking.NodeSubnet)
	if err != nil {
		return fmt.Errorf("networking.nodeSubnet: %q is not an IPv4 CIDR such as %s", c.Networking.NodeSubnet, DefaultNodeSubnet)
	}
	nodeOnes, _ := nodeNet.Mask.Size()
	if held := int64(1)<<(32-nodeOnes) - 2; int64(nodes) > held {
		return fmt.Errorf("networking.nodeSubnet: %s holds %d node addresses, fewer than the %d nodes; give a larger one or fewer nodes", nodeNet, max(held, 0), nodes)
	}
	return nil
}

// DeclaredNodes is how many nodes the config makes: nodes, or its node
// groups' counts together.
func (c *Cluster) DeclaredNodes() int {
	n := c.Nodes
	for _, g := range c.NodeGroups {
		n += g.Count
	}
	return n
}
