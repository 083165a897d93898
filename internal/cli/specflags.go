package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/component"
	"github.com/kubesim/kubesim/internal/controlplane"
)

type spec = v1alpha1.ClusterSpec

// specFlags are `create cluster`'s flags for the cluster's options: one
// row a flag, with its name, its usage and where its value lands in the
// ClusterSpec. A flag given on the command line overrides the --config
// file's field; one not given leaves it alone. A ClusterSpec field with no
// row here is on onlyInFiles (TestSpecFlagsCoverClusterSpec).
var specFlags = []component.Flag{
	{Name: "api-server-port", Usage: "loopback port of the API server (0: any free port)",
		Lands: component.At((*pflag.FlagSet).IntVar, func(s *spec) *int { return &s.Networking.APIServerPort })},
	{Name: "pod-subnet", Usage: "pod range, a CIDR per node holding at least 1,000 pods and the nodes' pods capacity (default " + v1alpha1.DefaultPodSubnet + ": 16,384 nodes of /22)",
		Lands: component.At((*pflag.FlagSet).StringVar, func(s *spec) *string { return &s.Networking.PodSubnet })},
	{Name: "service-subnet", Usage: "Service ClusterIP range (default " + v1alpha1.DefaultServiceSubnet + ")",
		Lands: component.At((*pflag.FlagSet).StringVar, func(s *spec) *string { return &s.Networking.ServiceSubnet })},
	{Name: "audit-policy", Usage: "audit.k8s.io/v1 Policy file (default: metadata of writes)",
		Lands: component.At((*pflag.FlagSet).StringVar, func(s *spec) *string { return &s.AuditPolicy })},
	{Name: "node-monitor-period", Usage: "how often node-lifecycle checks nodes (default 5s)",
		Lands: component.DurationAt(func(s *spec) **metav1.Duration { return &s.NodeLifecycle.NodeMonitorPeriod })},
	{Name: "node-monitor-grace-period", Usage: "how long a silent node stays Ready (default 50s)",
		Lands: component.DurationAt(func(s *spec) **metav1.Duration { return &s.NodeLifecycle.NodeMonitorGracePeriod })},
	{Name: "node-startup-grace-period", Usage: "how long a new node may take to be Ready (default 60s)",
		Lands: component.DurationAt(func(s *spec) **metav1.Duration { return &s.NodeLifecycle.NodeStartupGracePeriod })},
	{Name: "pod-eviction-toleration", Usage: "how long pods stay on a NotReady or unreachable node before eviction (default 300s)",
		Lands: component.DurationAt(func(s *spec) **metav1.Duration { return &s.NodeLifecycle.PodEvictionToleration })},
	{Name: "stages", Usage: "built-in stage set: " + strings.Join(v1alpha1.StageSets, " or ") + " (default " + v1alpha1.StageSets[0] + ")",
		Lands: component.At((*pflag.FlagSet).StringVar, func(s *spec) *string { return &s.Stages })},
	{Name: "nodes", Usage: "simulated nodes to create (node-000000, …)",
		Lands: component.At((*pflag.FlagSet).IntVar, func(s *spec) *int { return &s.Nodes })},
	{Name: "node-template", Usage: nodeTemplateUsage,
		Lands: component.At((*pflag.FlagSet).StringVar, func(s *spec) *string { return &s.NodeTemplate })},
	{Name: "percentage-of-nodes-to-score", Usage: "share of feasible nodes the scheduler scores (default: upstream's adaptive share)",
		Lands: component.As((*pflag.FlagSet).Int32Var, component.Pointer, func(s *spec) **int32 { return &s.Scheduler.PercentageOfNodesToScore })},
	{Name: "memory-limit", Usage: "memory budget of the control plane's processes together, such as 4Gi; 0 for none (default " + v1alpha1.DefaultMemoryLimit.String() + ")",
		Lands: component.As((*pflag.FlagSet).StringVar, memoryLimit, func(s *spec) **resource.Quantity { return &s.MemoryLimit })},
	{Name: "horizontal-pod-autoscaler-sync-period", Usage: "how often the HPA controller evaluates each HPA (default 15s)",
		Lands: component.DurationAt(func(s *spec) **metav1.Duration { return &s.HorizontalPodAutoscaler.SyncPeriod })},
	{Name: "horizontal-pod-autoscaler-downscale-stabilization", Usage: "how far back the HPA controller looks before it scales in (default 5m)",
		Lands: component.DurationAt(func(s *spec) **metav1.Duration { return &s.HorizontalPodAutoscaler.DownscaleStabilization })},
	{Name: "time-scale", Usage: "seconds of cluster time per real second: every component runs on one clock this much faster than real time, upstream's timings unchanged (default 1)",
		Lands: component.As((*pflag.FlagSet).Int32Var, timeScale, func(s *spec) *int32 { return &s.TimeScale })},
	{Name: "kubernetes", Usage: "the Kubernetes minor version of the control plane, such as 1.35: one of those `kubesim version` lists (default: the one kubesim is built on)",
		Lands: component.At((*pflag.FlagSet).StringVar, func(s *spec) *string { return &s.Kubernetes })},
	{Name: "from", Usage: "make the cluster a clone of this snapshot file (kubesim snapshot export)",
		Lands: component.At((*pflag.FlagSet).StringVar, func(s *spec) *string { return &s.From })},
	{Name: "from-context", Usage: "make the cluster a clone of this kubeconfig context's cluster, read now (get and list only)",
		Lands: component.At((*pflag.FlagSet).StringVar, func(s *spec) *string { return &s.FromContext })},
}

// onlyInFiles are the ClusterSpec fields (JSON paths) no flag sets: a
// Cluster file, a scenario's cluster or kubesimtest's Spec sets them.
var onlyInFiles = []string{
	"networking.nodeCIDRMaskSize", // sized to the nodes' pods capacity unless chosen
	"networking.nodeSubnet",       // simulated nodes' InternalIPs
	"scheduler.explainPods",       // the scheduler's records for `kubesim explain`
	"nodeGroups",                  // a list of mappings; --nodes and --node-template make the unnamed group
	"stageFiles",                  // Stage manifests made with the cluster
	"usage.defaultRequestPercent", // usage where none is declared
	"extraArgs",                   // upstream flags, by component
}

// timeScale refuses --time-scale 0 as -1 is: in the spec 0 is "not set",
// real time, which the user did not ask for.
func timeScale(n int32) (int32, error) { return n, v1alpha1.CheckTimeScale(n) }

func memoryLimit(v string) (*resource.Quantity, error) {
	limit, err := resource.ParseQuantity(v)
	if err != nil {
		return nil, fmt.Errorf("%q is not a size such as 2Gi (or 0 for no limit)", v)
	}
	return &limit, nil
}

// allSpecFlags are the CLI's own rows and those each component declares
// for the options it reads.
func allSpecFlags() []component.Flag {
	flags := slices.Clone(specFlags)
	for _, comp := range controlplane.Components() {
		flags = append(flags, comp.Flags...)
	}
	return flags
}

// addSpecFlags defines every spec flag on fs; the function it returns lays
// those given on the command line over a spec, in the table's order.
func addSpecFlags(fs *pflag.FlagSet) func(*spec) error {
	flags := allSpecFlags()
	lands := make([]func(*spec) error, len(flags))
	for i, f := range flags {
		lands[i] = f.Lands(fs, f.Name, f.Usage)
	}
	return func(s *spec) error {
		for i, f := range flags {
			if fs.Changed(f.Name) {
				if err := lands[i](s); err != nil {
					return err
				}
			}
		}
		return nil
	}
}
