package karpenter

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
)

// --autoscaler takes karpenter, or nothing; anything else is refused
// naming what is offered. --karpenter-instance-types implies it, and
// neither flag undoes the other or the --config file's instance types.
func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		config *v1alpha1.Karpenter
		want   *v1alpha1.Karpenter
		err    string
	}{
		{args: []string{"--autoscaler=karpenter"}, want: &v1alpha1.Karpenter{}},
		{args: []string{"--autoscaler="}, config: &v1alpha1.Karpenter{}, want: nil},
		{args: []string{"--autoscaler=cluster-autoscaler"}, err: "--autoscaler: \"cluster-autoscaler\" is no autoscaler kubesim runs; use karpenter"},
		{args: []string{"--karpenter-instance-types=t.json"}, want: &v1alpha1.Karpenter{InstanceTypes: "t.json"}},
		{args: []string{"--autoscaler=karpenter", "--karpenter-instance-types=t.json"}, want: &v1alpha1.Karpenter{InstanceTypes: "t.json"}},
		{args: []string{"--autoscaler=karpenter"}, config: &v1alpha1.Karpenter{InstanceTypes: "c.json"}, want: &v1alpha1.Karpenter{InstanceTypes: "c.json"}},
	} {
		fs := pflag.NewFlagSet("create", pflag.ContinueOnError)
		var lands []func(*v1alpha1.ClusterSpec) error
		for _, f := range Component().Flags {
			land := f.Lands(fs, f.Name, f.Usage)
			lands = append(lands, func(s *v1alpha1.ClusterSpec) error {
				if !fs.Changed(f.Name) {
					return nil
				}
				return land(s)
			})
		}
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		s := &v1alpha1.ClusterSpec{Autoscaler: v1alpha1.Autoscaler{Karpenter: tc.config}}
		var err error
		for _, land := range lands {
			if err == nil {
				err = land(s)
			}
		}
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: err = %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(s.Autoscaler.Karpenter, tc.want) {
			t.Errorf("%v over %+v: %+v, %v; want %+v", tc.args, tc.config, s.Autoscaler.Karpenter, err, tc.want)
		}
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
	if slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--instance-types-file-path") }) {
		t.Errorf("args %v: the built-in catalog needs no file", args)
	}
	c.Status.InstanceTypes = "[]"
	if args := comp.Args(clusterdir.For(t.TempDir(), "k"), c); !slices.Contains(args, "--instance-types-file-path="+clusterdir.For(t.TempDir(), "k").InstanceTypes()) && !slices.ContainsFunc(args, func(a string) bool {
		return strings.HasPrefix(a, "--instance-types-file-path=") && strings.HasSuffix(a, "instance-types.json")
	}) {
		t.Errorf("args %v: the user's instance types are not passed", args)
	}
	if len(comp.CRDs) != 5 {
		t.Errorf("%d CRDs, want NodePool, NodeClaim, NodeOverlay, CapacityBuffer and KWOKNodeClass", len(comp.CRDs))
	}
}
