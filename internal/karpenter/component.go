// Package karpenter is the cluster's node autoscaler, when asked for
// (`create cluster --autoscaler karpenter`): Karpenter's own controllers
// with its KWOK cloud provider, as its kwok/main.go assembles them, in a
// process the supervisor runs. Karpenter decides which NodeClaims to
// launch and which nodes to consolidate; its provider creates their Node
// objects, and the kubelet simulator makes them Ready like any other.
package karpenter

import (
	"cmp"
	_ "embed"
	"fmt"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/component"
	"github.com/kubesim/kubesim/internal/pki"

	karpenterapis "sigs.k8s.io/karpenter/kwok/apis"
	coreapis "sigs.k8s.io/karpenter/pkg/apis"
)

// ComponentName is Karpenter's name among the cluster's components.
const ComponentName = "karpenter"

// Its ports: Prometheus metrics and the health probes, on loopback
// (patches/sigs.k8s.io/karpenter/0007).
const (
	metricsPort = "metrics"
	healthPort  = "health"
)

var identity = component.Identity{File: ComponentName, User: "kubesim:karpenter"}

// What Karpenter's chart grants it, less leader election (one replica).
var (
	//go:embed clusterrole.yaml
	clusterRole []byte
	//go:embed nodeleases-role.yaml
	nodeLeasesRole []byte
)

// Component is Karpenter's entry in the control plane's table. A cluster
// without an autoscaler has neither its process nor its CRDs.
func Component() component.Component {
	return component.Component{
		Name:    ComponentName,
		Main:    run,
		Args:    args,
		Prepare: prepare,
		Flags: []component.Flag{
			{Name: "autoscaler", Usage: "run a node autoscaler: karpenter (Karpenter's controllers with its KWOK cloud provider; NodePools launch simulated nodes)",
				Lands: landKarpenter(func(v string, k *v1alpha1.Karpenter) (*v1alpha1.Karpenter, error) {
					switch v {
					case "":
						return nil, nil
					case "karpenter":
						return cmp.Or(k, &v1alpha1.Karpenter{}), nil
					}
					return nil, errUnknownAutoscaler(v)
				})},
			{Name: "karpenter-instance-types", Usage: "JSON file of instance types for Karpenter, in the shape of its KWOK provider's catalog (implies --autoscaler karpenter; default: that catalog)",
				Lands: landKarpenter(func(v string, k *v1alpha1.Karpenter) (*v1alpha1.Karpenter, error) {
					k = cmp.Or(k, &v1alpha1.Karpenter{})
					k.InstanceTypes = v
					return k, nil
				})},
		},
		Enabled:      func(c *v1alpha1.Cluster) bool { return c.Autoscaler.Karpenter != nil },
		OnlyIfRun:    true,
		Ready:        component.Listening(ComponentName, healthPort),
		Ports:        []string{metricsPort, healthPort},
		Identity:     &identity,
		Grants:       []component.Grant{{Role: clusterRole}, {Role: nodeLeasesRole, Namespace: "kube-node-lease"}},
		CRDs:         [][]byte{coreapis.NodePoolCRD, coreapis.NodeClaimCRD, coreapis.NodeOverlayCRD, coreapis.CapacityBufferCRD, karpenterapis.KWOKNodeClassCRD},
		MemoryWeight: 15,
	}
}

// landKarpenter lands a string flag in the spec's Karpenter, given what
// it was (from the --config file or the other flag), so neither flag
// undoes what the other set.
func landKarpenter(set func(v string, k *v1alpha1.Karpenter) (*v1alpha1.Karpenter, error)) component.Landing {
	return func(fs *pflag.FlagSet, name, usage string) func(*v1alpha1.ClusterSpec) error {
		value := fs.String(name, "", usage)
		return func(s *v1alpha1.ClusterSpec) error {
			k, err := set(*value, s.Autoscaler.Karpenter)
			if err != nil {
				return fmt.Errorf("--%s: %w", name, err)
			}
			s.Autoscaler.Karpenter = k
			return nil
		}
	}
}

// args are Karpenter's own flags, after kubesim's --kubeconfig.
func args(d clusterdir.Dir, c *v1alpha1.Cluster) []string {
	args := []string{
		"--kubeconfig=" + d.ComponentKubeconfig(identity.File),
		"--disable-leader-election=true", // one replica, supervised
		"--metrics-port=" + strconv.Itoa(c.Status.Ports.Get(ComponentName, metricsPort)),
		"--health-probe-port=" + strconv.Itoa(c.Status.Ports.Get(ComponentName, healthPort)),
		// A simulator's API server has the room upstream's defaults
		// (200/300) guard a real one's against.
		"--kube-client-qps=1000",
		"--kube-client-burst=2000",
		"--log-level=info",
	}
	if c.Status.InstanceTypes != "" {
		args = append(args, "--instance-types-file-path="+d.InstanceTypes())
	}
	return args
}

// prepare writes the user's instance types, read when the cluster was made.
func prepare(d clusterdir.Dir, c *v1alpha1.Cluster) error {
	if c.Status.InstanceTypes == "" {
		return nil
	}
	return pki.WriteFile(d.InstanceTypes(), []byte(c.Status.InstanceTypes))
}
