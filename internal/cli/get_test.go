package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/kubesim/kubesim/internal/cluster"
	"github.com/kubesim/kubesim/internal/scale"
)

func TestGetClustersOutput(t *testing.T) {
	for format, want := range map[string]string{"json": "[]\n", "yaml": "[]\n", "table": ""} {
		out, errOut, err := execute(t, "get", "clusters", "-o", format)
		if err != nil || out != want {
			t.Errorf("get clusters -o %s with no clusters: %q, %v; want %q", format, out, err, want)
		}
		if hint := strings.Contains(errOut, "No clusters"); hint != (format == "table") {
			t.Errorf("get clusters -o %s: stderr %q; the hint is for tables only", format, errOut)
		}
	}
	_, _, err := execute(t, "get", "clusters", "-o", "xml")
	if want := `--output: "xml": use one of table, json, yaml`; err == nil || err.Error() != want {
		t.Errorf("get clusters -o xml: %v, want %q", err, want)
	}
}

// `get node-template` prints a manifest that reads back as the default node,
// so a template started from it changes only what its author changed.
func TestGetNodeTemplate(t *testing.T) {
	out, _, err := execute(t, "get", "node-template")
	if err != nil {
		t.Fatal(err)
	}
	node, err := scale.ParseTemplate([]byte(out))
	if err != nil {
		t.Fatalf("get node-template printed what --node-template refuses: %v\n%s", err, out)
	}
	if !equality.Semantic.DeepEqual(node, scale.DefaultTemplate()) {
		t.Errorf("get node-template: %+v, want the default node %+v", node, scale.DefaultTemplate())
	}
}

func TestPrintClustersShowsDegradedWithItsCause(t *testing.T) {
	infos := []cluster.Info{
		{Name: "blue", Running: true, Status: cluster.StatusDegraded, Cause: "kube-scheduler: cannot write its log: no space left on device", Created: time.Now()},
		{Name: "green", Running: true, Status: cluster.StatusRunning, Created: time.Now()},
		{Name: "red", Status: cluster.StatusStopped, Created: time.Now()},
	}
	var out, errOut bytes.Buffer
	if err := printClusters(&out, &errOut, infos); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	for i, want := range []string{"STATUS", "degraded (kube-scheduler: cannot write its log: no space left on device)", "running", "stopped"} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("line %d %q does not say %q", i, lines[i], want)
		}
	}
}
