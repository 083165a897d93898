package cluster

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/credentials"
	"github.com/kubesim/kubesim/internal/devices"
	"github.com/kubesim/kubesim/internal/scale"
)

// createOptions are how a new cluster's node groups are made, each read
// and checked before anything is: nodeGroups, or the unnamed group of
// nodes: N, which base describes (its template and labels from flags).
// base also says how to show progress and how long to wait.
func createOptions(c *v1alpha1.Cluster, base scale.Options) ([]scale.Options, error) {
	if len(c.NodeGroups) == 0 {
		if c.Nodes == 0 {
			return nil, nil
		}
		base.Replicas, base.Group.Count = c.Nodes, c.Nodes
		return []scale.Options{base}, nil
	}
	if len(base.Group.Labels) > 0 {
		return nil, fmt.Errorf("--node-label: labels the nodes of --nodes; with nodeGroups, give each group its labels")
	}
	var out []scale.Options
	for i, g := range c.NodeGroups {
		o, err := scale.GroupOptions(g)
		if err != nil {
			return nil, fmt.Errorf("nodeGroups[%d].template: %w", i, err)
		}
		o.Wait, o.Progress, o.Terminal = base.Wait, base.Progress, base.Terminal
		out = append(out, o)
	}
	return out, nil
}

// resolveNodeCIDRs chooses the prefix length of the new cluster's node
// CIDRs (Status.NodeCIDRMaskSize): networking.nodeCIDRMaskSize if set,
// else the smallest CIDR holding DefaultPodsPerNode pods and the largest
// pods capacity its node groups and node template declare. Then it checks
// that the pod subnet holds a CIDR for every node.
func resolveNodeCIDRs(c *v1alpha1.Cluster, groups []scale.Options, base scale.Options) error {
	mask := c.Networking.NodeCIDRMaskSize
	if mask == 0 {
		pods := scale.PodsCapacity(base)
		for _, o := range groups {
			pods = max(pods, scale.PodsCapacity(o))
		}
		mask = v1alpha1.NodeCIDRMaskFor(pods)
	}
	c.Status.NodeCIDRMaskSize = mask
	return c.CheckNodeAddresses(c.DeclaredNodes(), mask)
}

// checkScaleTotal refuses a scale that leaves the cluster with more nodes
// than its pod subnet holds node CIDRs (or its node subnet addresses).
func checkScaleTotal(c *v1alpha1.Cluster, replicas int) func(int) error {
	return func(total int) error {
		mask := c.NodeCIDRMask()
		if held, err := v1alpha1.NodeCIDRs(c.Networking.PodSubnet, mask); err == nil && total > held {
			return fmt.Errorf("--replicas: %d would give cluster %q %d nodes, more than the %d /%d node CIDRs its networking.podSubnet %s holds; give this group at most %d (more nodes need a new cluster with a larger --pod-subnet)",
				replicas, c.Name, total, held, mask, c.Networking.PodSubnet, max(held-(total-replicas), 0))
		}
		if err := c.CheckNodeAddresses(total, mask); err != nil {
			return fmt.Errorf("--replicas: %d would give cluster %q %d nodes: %w", replicas, c.Name, total, err)
		}
		return nil
	}
}

// absTemplates makes the groups' template paths absolute, so that the
// cluster.yaml keeping them serves `scale node --group` from anywhere.
func absTemplates(groups []v1alpha1.NodeGroup) error {
	for i := range groups {
		if t := groups[i].Template; t != "" {
			abs, err := filepath.Abs(t)
			if err != nil {
				return fmt.Errorf("nodeGroups[%d].template: %w", i, err)
			}
			groups[i].Template = abs
		}
	}
	return nil
}

// makeNodes makes each group's nodes in turn, once the cluster is ready.
func (p *Provider) makeNodes(ctx context.Context, c *v1alpha1.Cluster, client kubernetes.Interface, groups []scale.Options) error {
	for _, o := range groups {
		if c.DisableKubeletSim {
			o.Wait = 0 // nothing here will make them Ready
		}
		o.Gone = func() error { return p.CheckRunning(c.Name) }
		if err := scale.Nodes(ctx, client, o); err != nil {
			return err
		}
		if o.Group.Name == "" {
			p.logf(" ✓ %d nodes Ready", o.Replicas)
		} else {
			p.logf(" ✓ %d nodes of group %s Ready", o.Replicas, o.Group.Name)
		}
	}
	return nil
}

// ScaleNodes gives the node group o.Group.Name of a running cluster
// o.Replicas nodes. A group of the cluster's nodeGroups is made as its
// cluster file says, with o's template (if set) in place of its own and
// o's labels added; the unnamed group of nodes: N is made from o alone.
// It holds the cluster's operation lock until the nodes are Ready, so of
// scales run at once each sees its own count through, and the last to
// take the lock leaves its count.
func (p *Provider) ScaleNodes(ctx context.Context, name string, o scale.Options) error {
	return p.operate(ctx, name, func(clusterdir.Dir) error { return p.scaleNodes(ctx, name, o) })
}

// scaleNodes is ScaleNodes; the caller holds the operation lock.
func (p *Provider) scaleNodes(ctx context.Context, name string, o scale.Options) error {
	d, c, err := p.openRunning(name)
	if err != nil {
		return err
	}
	if g, ok := findGroup(c.NodeGroups, o.Group.Name); ok {
		saved, err := scale.GroupOptions(g)
		if err != nil {
			return fmt.Errorf("node group %q's template (nodeGroups in %s): %w", g.Name, d.ConfigFile(), err)
		}
		if o.Template != nil {
			saved.Template = o.Template
		}
		saved.Group.Labels = maps.Clone(g.Labels)
		if saved.Group.Labels == nil {
			saved.Group.Labels = map[string]string{}
		}
		maps.Copy(saved.Group.Labels, o.Group.Labels)
		saved.Replicas, saved.Wait, saved.Progress, saved.Terminal = o.Replicas, o.Wait, o.Progress, o.Terminal
		o = saved
	} else if o.Group.Name != "" {
		return fmt.Errorf("cluster %q has no node group %q; %s", name, o.Group.Name, groupList(c.NodeGroups))
	}
	client, err := credentials.AdminClient(d, 0)
	if err != nil {
		return err
	}
	o.Gone = func() error { return p.CheckRunning(name) }
	o.CheckTotal = checkScaleTotal(c, o.Replicas)
	return scale.Nodes(ctx, client, o)
}

func findGroup(groups []v1alpha1.NodeGroup, name string) (v1alpha1.NodeGroup, bool) {
	for _, g := range groups {
		if g.Name == name {
			return g, true
		}
	}
	return v1alpha1.NodeGroup{}, false
}

// groupList says which groups a cluster has, for an error.
func groupList(groups []v1alpha1.NodeGroup) string {
	var names []string
	for _, g := range groups {
		if g.Name != "" {
			names = append(names, g.Name)
		}
	}
	if len(names) == 0 {
		return "it has only the unnamed group (node-000000, …: leave --group out); groups are declared in a Cluster file's nodeGroups"
	}
	return "its groups are " + strings.Join(names, ", ") + ", and the unnamed group (node-000000, …: leave --group out)"
}

// RepublishDevices makes the named node of a running cluster publish its
// node group's devices again, if the group has any (after `node stop
// --withdraw-devices`). A node of no group of the cluster's has none.
func (p *Provider) RepublishDevices(ctx context.Context, name, node string) error {
	d, c, err := p.openRunning(name)
	if err != nil {
		return err
	}
	for i := range c.NodeGroups {
		g := &c.NodeGroups[i]
		if _, ok := g.NodeIndex(node); !ok || len(g.Devices) == 0 {
			continue
		}
		client, err := credentials.AdminClient(d, 0)
		if err != nil {
			return err
		}
		n, err := client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		return devices.Republish(ctx, client, g, n)
	}
	return nil
}
