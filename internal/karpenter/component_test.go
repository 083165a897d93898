package karpenter

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
)

// --autoscaler takes karpenter, or nothing; anything else is refused
// naming what is offered.
func TestAutoscalerFlag(t *testing.T) {
	if k, err := autoscalerFlag("karpenter"); err != nil || k == nil {
		t.Errorf("karpenter: %v, %v", k, err)
	}
	if k, err := autoscalerFlag(""); err != nil || k != nil {
		t.Errorf(`"": %v, %v; want no autoscaler`, k, err)
	}
	if _, err := autoscalerFlag("cluster-autoscaler"); err == nil || !strings.Contains(err.Error(), "use karpenter") {
		t.Errorf("cluster-autoscaler: %v; want a refusal naming karpenter", err)
	}
}

// Karpenter runs only where asked for, with one replica's flags and its
// endpoints on the cluster's ports; kubesim's --kubeconfig comes first.
func TestComponent(t *testing.T) {
	c := &v1alpha1.Cluster{Status: &v1alpha1.ClusterStatus{}}
	comp := Component()
	if comp.IsEnabled(c) || !comp.OnlyIfRun {
		t.Error("Karpenter runs, or its CRDs are written, in a cluster without --autoscaler")
	}
	c.Autoscaler.Karpenter = &v1alpha1.Karpenter{}
	if !comp.IsEnabled(c) {
		t.Error("a cluster with autoscaler.karpenter runs no Karpenter")
	}
	c.Status.Ports.Set(ComponentName, metricsPort, 4100)
	c.Status.Ports.Set(ComponentName, healthPort, 4101)
	args := comp.Args(clusterdir.For(t.TempDir(), "k"), c)
	if !strings.HasPrefix(args[0], "--kubeconfig=") {
		t.Errorf("args %v: --kubeconfig must come first", args)
	}
	for _, want := range []string{"--disable-leader-election=true", "--metrics-port=4100", "--health-probe-port=4101"} {
		if !slices.Contains(args, want) {
			t.Errorf("args %v lack %s", args, want)
		}
	}
	if len(comp.CRDs) != 5 {
		t.Errorf("%d CRDs, want NodePool, NodeClaim, NodeOverlay, CapacityBuffer and KWOKNodeClass", len(comp.CRDs))
	}
}
