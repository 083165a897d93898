package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/nodecost"
)

func TestGetCost(t *testing.T) {
	home := t.TempDir()
	t.Setenv("KUBESIM_HOME", home)
	for name, autoscaler := range map[string]*v1alpha1.Karpenter{"static": nil, "elastic": {}} {
		d := clusterdir.For(home, name)
		if err := os.MkdirAll(d.Path, 0o700); err != nil {
			t.Fatal(err)
		}
		c := &v1alpha1.Cluster{Name: name, Status: &v1alpha1.ClusterStatus{}}
		c.Autoscaler.Karpenter = autoscaler
		if err := d.Save(c); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) (string, string, error) {
		root := NewRootCommand()
		var out, errOut bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&errOut)
		root.SetArgs(append([]string{"get", "cost"}, args...))
		err := root.Execute()
		return out.String(), errOut.String(), err
	}

	_, _, err := run("--name", "static")
	if want := `cluster "static" runs no node autoscaler, so no NodePool nodes to cost: create the cluster with --autoscaler karpenter`; err == nil || err.Error() != want {
		t.Errorf("get cost of a cluster without an autoscaler: %v, want %q", err, want)
	}

	// Nothing launched yet: no rows, no error.
	out, _, err := run("--name", "elastic", "-o", "json")
	var r nodecost.Report
	if err != nil || json.Unmarshal([]byte(out), &r) != nil || r.NodePools == nil || len(r.NodePools) != 0 || r.Cluster != "elastic" {
		t.Errorf("get cost -o json before any node: %q, %v; want nodePools: []", out, err)
	}
	if since := time.Since(r.Time); since < 0 || since > time.Minute {
		t.Errorf("get cost's time %s is not now (a cluster on real time)", r.Time)
	}
	out, errOut, err := run("--name", "elastic")
	if err != nil || out != "" || !strings.Contains(errOut, "No NodePool has launched a node yet") {
		t.Errorf("get cost before any node: %q, %q, %v", out, errOut, err)
	}
}

func TestPrintCost(t *testing.T) {
	r := &nodecost.Report{Cluster: "elastic", Time: time.Date(2030, 1, 1, 6, 0, 0, 0, time.UTC),
		NodePools: []nodecost.PoolCost{
			{NodePool: "default", Nodes: 2, Launched: 5, NodeHours: 10.5, Cost: 1.785, CostPerHour: 0.34},
			{NodePool: "spot", Launched: 1, NodeHours: 0.25, Cost: 0.0125},
		}}
	r.Total = nodecost.Total(r.NodePools)
	var out, errOut bytes.Buffer
	if err := printCost(&out, &errOut, r); err != nil {
		t.Fatal(err)
	}
	want := `NODEPOOL   NODES   LAUNCHED   NODE-HOURS   COST/H   COST
default    2       5          10.500       0.3400   1.7850
spot       0       1          0.250        0.0000   0.0125
TOTAL      2       6          10.750       0.3400   1.7975

At cluster time 2030-01-01T06:00:00Z. Prices are the instance-type catalog's, per hour, not a bill.
`
	if out.String() != want || errOut.Len() != 0 {
		t.Errorf("printCost:\n%s\nwant\n%s", out.String(), want)
	}
}
