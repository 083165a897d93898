package cluster

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubesim/kubesim/internal/manifest"
)

// writeConfig writes a config file for LoadConfig to read.
func writeConfig(t *testing.T, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cluster.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadConfigRejectsUnknownFieldsByPath(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"apiVersion: kubesim.io/v1alpha1\nkind: Cluster\nworkers: 3\n", `unknown field "workers"`},
		{"apiVersion: kubesim.io/v1alpha1\nkind: Cluster\nnetworking:\n  podCIDR: x\n", `unknown field "networking.podCIDR"`},
		{"apiVersion: kubesim.io/v1alpha1\nkind: Cluster\nname: a\nname: b\n", `c.yaml:4: not valid YAML: key "name" already set`},
		{"apiVersion: kubesim.io/v1alpha1\nkind: Cluster\nname: a\ntimeScale: 0\n", `c.yaml:4: timeScale: must be a whole number from 1 (real time) to 1000, got 0`},
		{"apiVersion: kubesim.io/v1alpha1\nkind: Cluster\nnodeGroups:\n- count: 1\n- count: x\n", `c.yaml:5: nodeGroups[1].count: must be an integer, got "x"`},
		{"apiVersion: v1\nkind: Pod\n", "not a Cluster (kind: Pod)"},
		{"apiVersion: kubesim.io/v1alpha1\nkind: Cluster\nnodes: three\n", `nodes: must be an integer, got "three"`},
		{"name: [unclosed\n", "not valid YAML"},
	} {
		_, err := LoadConfig(writeConfig(t, tc.yaml))
		if err == nil || !strings.Contains(manifest.InFile("c.yaml", err).Error(), tc.want) {
			t.Errorf("LoadConfig(%q) = %v, want error containing %q", tc.yaml, err, tc.want)
		}
	}
}

func TestLoadConfigOfAMissingFileIsAPathError(t *testing.T) {
	_, err := LoadConfig(filepath.Join(t.TempDir(), "missing.yaml"))
	var pathErr *fs.PathError
	if !errors.As(err, &pathErr) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("LoadConfig(missing) = %v, want an *fs.PathError for a file that does not exist", err)
	}
}

func TestLoadConfigReadsEveryOption(t *testing.T) {
	c, err := LoadConfig(writeConfig(t, `apiVersion: kubesim.io/v1alpha1
kind: Cluster
name: blue
auditPolicy: /tmp/p.yaml
nodes: 7
nodeTemplate: node.yaml
disableKubeletSim: true
stages: realistic
networking:
  apiServerPort: 6443
  podSubnet: 10.64.0.0/10
  serviceSubnet: 10.200.0.0/16
  nodeSubnet: 172.16.0.0/12
nodeLifecycle:
  nodeMonitorPeriod: 1s
  nodeMonitorGracePeriod: 10s
  nodeStartupGracePeriod: 30s
  podEvictionToleration: 20s
scheduler:
  percentageOfNodesToScore: 10
descheduler:
  profiles: [LongLifecycle]
  interval: 2m
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
		c.Stages != "realistic" ||
		c.NodeLifecycle.NodeMonitorPeriod.Duration != time.Second ||
		c.NodeLifecycle.NodeMonitorGracePeriod.Duration != 10*time.Second ||
		c.NodeLifecycle.NodeStartupGracePeriod.Duration != 30*time.Second ||
		c.NodeLifecycle.PodEvictionToleration.Duration != 20*time.Second ||
		*c.Scheduler.PercentageOfNodesToScore != 10 ||
		len(c.Descheduler.Profiles) != 1 || c.Descheduler.Interval.Duration != 2*time.Minute {
		t.Errorf("options not all read: %+v", c)
	}
}
