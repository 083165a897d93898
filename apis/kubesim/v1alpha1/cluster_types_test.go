package v1alpha1

import (
	"strings"
	"testing"
	"time"
)

func TestParseClusterRejectsUnknownFieldsByPath(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"apiVersion: kubesim.io/v1alpha1\nkind: Cluster\nworkers: 3\n", `unknown field "workers"`},
		{"apiVersion: kubesim.io/v1alpha1\nkind: Cluster\nnetworking:\n  podCIDR: x\n", `unknown field "networking.podCIDR"`},
		{"apiVersion: kubesim.io/v1alpha1\nkind: Cluster\nname: a\nname: b\n", `line 4: key "name" already set`},
		{"apiVersion: v1\nkind: Pod\n", "apiVersion/kind"},
		{"name: [unclosed\n", "not valid YAML"},
	} {
		_, err := ParseCluster([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseCluster(%q) = %v, want error containing %q", tc.yaml, err, tc.want)
		}
	}
}

func TestParseClusterReadsEveryOption(t *testing.T) {
	c, err := ParseCluster([]byte(`apiVersion: kubesim.io/v1alpha1
kind: Cluster
name: blue
auditPolicy: /tmp/p.yaml
nodes: 7
nodeTemplate: node.yaml
disableKubeletSim: true
networking:
  apiServerPort: 6443
  podSubnet: 10.64.0.0/10
  serviceSubnet: 10.200.0.0/16
  nodeSubnet: 172.16.0.0/12
nodeLifecycle:
  nodeMonitorPeriod: 1s
  nodeMonitorGracePeriod: 10s
  nodeStartupGracePeriod: 30s
`))
	if err != nil {
		t.Fatal(err)
	}
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Name != "blue" || c.AuditPolicy != "/tmp/p.yaml" || c.Networking.APIServerPort != 6443 ||
		c.Networking.PodSubnet != "10.64.0.0/10" || c.Networking.ServiceSubnet != "10.200.0.0/16" ||
		c.Networking.NodeSubnet != "172.16.0.0/12" || c.Nodes != 7 || c.NodeTemplate != "node.yaml" || !c.DisableKubeletSim ||
		c.NodeLifecycle.NodeMonitorPeriod.Duration != time.Second ||
		c.NodeLifecycle.NodeMonitorGracePeriod.Duration != 10*time.Second ||
		c.NodeLifecycle.NodeStartupGracePeriod.Duration != 30*time.Second {
		t.Errorf("options not all read: %+v", c)
	}
}

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
		{func(c *Cluster) { c.Nodes = -1 }, "nodes: must be 0 or more"},
		{func(c *Cluster) { c.NodeLifecycle.NodeMonitorPeriod.Duration = 0 }, "nodeLifecycle.nodeMonitorPeriod"},
		{func(c *Cluster) { c.NodeLifecycle.NodeMonitorGracePeriod.Duration = time.Second }, "nodeLifecycle.nodeMonitorGracePeriod"},
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
	c := &Cluster{Status: &ClusterStatus{}}
	c.SetDefaults()
	d := c.DeepCopy()
	d.Status.Ports.APIServer = 1
	d.NodeLifecycle.NodeMonitorPeriod.Duration = time.Hour
	if c.Status.Ports.APIServer == 1 || c.NodeLifecycle.NodeMonitorPeriod.Duration == time.Hour {
		t.Error("DeepCopy shares memory with the original")
	}
}
