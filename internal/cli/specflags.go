package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

type spec = v1alpha1.ClusterSpec

// specFlags are `create cluster`'s flags for the cluster's options: one
// row a flag, with its name, its usage and where its value lands in the
// ClusterSpec. A flag given on the command line overrides the --config
// file's field; one not given leaves it alone. A ClusterSpec field with no
// row here is on onlyInFiles (TestSpecFlagsCoverClusterSpec).
var specFlags = []specFlag{
	{"api-server-port", "loopback port of the API server (0: any free port)",
		at((*pflag.FlagSet).IntVar, func(s *spec) *int { return &s.Networking.APIServerPort })},
	{"pod-subnet", "pod range, a CIDR per node holding at least 1,000 pods and the nodes' pods capacity (default " + v1alpha1.DefaultPodSubnet + ": 16,384 nodes of /22)",
		at((*pflag.FlagSet).StringVar, func(s *spec) *string { return &s.Networking.PodSubnet })},
	{"service-subnet", "Service ClusterIP range (default " + v1alpha1.DefaultServiceSubnet + ")",
		at((*pflag.FlagSet).StringVar, func(s *spec) *string { return &s.Networking.ServiceSubnet })},
	{"audit-policy", "audit.k8s.io/v1 Policy file (default: metadata of writes)",
		at((*pflag.FlagSet).StringVar, func(s *spec) *string { return &s.AuditPolicy })},
	{"node-monitor-period", "how often node-lifecycle checks nodes (default 5s)",
		durationAt(func(s *spec) **metav1.Duration { return &s.NodeLifecycle.NodeMonitorPeriod })},
	{"node-monitor-grace-period", "how long a silent node stays Ready (default 50s)",
		durationAt(func(s *spec) **metav1.Duration { return &s.NodeLifecycle.NodeMonitorGracePeriod })},
	{"node-startup-grace-period", "how long a new node may take to be Ready (default 60s)",
		durationAt(func(s *spec) **metav1.Duration { return &s.NodeLifecycle.NodeStartupGracePeriod })},
	{"pod-eviction-toleration", "how long pods stay on a NotReady or unreachable node before eviction (default 300s)",
		durationAt(func(s *spec) **metav1.Duration { return &s.NodeLifecycle.PodEvictionToleration })},
	{"stages", "built-in stage set: " + strings.Join(v1alpha1.StageSets, " or ") + " (default " + v1alpha1.StageSets[0] + ")",
		at((*pflag.FlagSet).StringVar, func(s *spec) *string { return &s.Stages })},
	{"descheduler-policy", "run the descheduler as a component with this descheduler/v1alpha2 policy",
		at((*pflag.FlagSet).StringVar, func(s *spec) *string { return &s.Descheduler.Policy })},
	{"descheduler-profile", "run the descheduler as a component with these named profiles",
		at((*pflag.FlagSet).StringSliceVar, func(s *spec) *[]string { return &s.Descheduler.Profiles })},
	{"descheduling-interval", "time between the descheduler's cycles (default 1m)",
		durationAt(func(s *spec) **metav1.Duration { return &s.Descheduler.Interval })},
	{"nodes", "simulated nodes to create (node-000000, …)",
		at((*pflag.FlagSet).IntVar, func(s *spec) *int { return &s.Nodes })},
	{"node-template", nodeTemplateUsage,
		at((*pflag.FlagSet).StringVar, func(s *spec) *string { return &s.NodeTemplate })},
	{"percentage-of-nodes-to-score", "share of feasible nodes the scheduler scores (default: upstream's adaptive share)",
		as((*pflag.FlagSet).Int32Var, pointer, func(s *spec) **int32 { return &s.Scheduler.PercentageOfNodesToScore })},
	{"memory-limit", "memory budget of the control plane's processes together, such as 4Gi; 0 for none (default " + v1alpha1.DefaultMemoryLimit.String() + ")",
		as((*pflag.FlagSet).StringVar, memoryLimit, func(s *spec) **resource.Quantity { return &s.MemoryLimit })},
	{"disable-kubelet-sim", "run no kubelet simulator (nodes stay NotReady unless simulated from elsewhere)",
		at((*pflag.FlagSet).BoolVar, func(s *spec) *bool { return &s.DisableKubeletSim })},
	{"disable-dpdb-controller", "run no DistributedPodDisruptionBudget controller (the CRD is installed; run one from deploy/dpdb)",
		at((*pflag.FlagSet).BoolVar, func(s *spec) *bool { return &s.DisableDPDBController })},
	{"disable-usage-metrics", "serve no metrics.k8s.io from declared usage (kubectl top and CPU/memory HPAs then have no metrics)",
		at((*pflag.FlagSet).BoolVar, func(s *spec) *bool { return &s.Usage.Disabled })},
	{"horizontal-pod-autoscaler-sync-period", "how often the HPA controller evaluates each HPA (default 15s)",
		durationAt(func(s *spec) **metav1.Duration { return &s.HorizontalPodAutoscaler.SyncPeriod })},
	{"horizontal-pod-autoscaler-downscale-stabilization", "how far back the HPA controller looks before it scales in (default 5m)",
		durationAt(func(s *spec) **metav1.Duration { return &s.HorizontalPodAutoscaler.DownscaleStabilization })},
	{"time-scale", "seconds of cluster time per real second: every component runs on one clock this much faster than real time, upstream's timings unchanged (default 1)",
		at((*pflag.FlagSet).Int32Var, func(s *spec) *int32 { return &s.TimeScale })},
	{"from", "make the cluster a clone of this snapshot file (kubesim snapshot export)",
		at((*pflag.FlagSet).StringVar, func(s *spec) *string { return &s.From })},
	{"from-context", "make the cluster a clone of this kubeconfig context's cluster, read now (get and list only)",
		at((*pflag.FlagSet).StringVar, func(s *spec) *string { return &s.FromContext })},
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

// specFlag is one row of specFlags.
type specFlag struct {
	name, usage string
	lands       landing
}

// landing defines a flag on fs and returns what lays the value it was
// given over a spec.
type landing func(fs *pflag.FlagSet, name, usage string) func(*spec) error

// at lands a flag's value, as it is, in a field of its type.
func at[T any](define func(*pflag.FlagSet, *T, string, T, string), field func(*spec) *T) landing {
	return as(define, func(v T) (T, error) { return v, nil }, field)
}

// as lands a flag's value, converted, in a field of another type; a value
// that does not convert is an error naming the flag.
func as[F, T any](define func(*pflag.FlagSet, *F, string, F, string), convert func(F) (T, error), field func(*spec) *T) landing {
	return func(fs *pflag.FlagSet, name, usage string) func(*spec) error {
		var value, zero F
		define(fs, &value, name, zero, usage)
		return func(s *spec) error {
			v, err := convert(value)
			if err != nil {
				return fmt.Errorf("--%s: %w", name, err)
			}
			*field(s) = v
			return nil
		}
	}
}

// durationAt lands a duration flag in an optional duration field.
func durationAt(field func(*spec) **metav1.Duration) landing {
	return as((*pflag.FlagSet).DurationVar, func(d time.Duration) (*metav1.Duration, error) {
		return &metav1.Duration{Duration: d}, nil
	}, field)
}

func pointer[T any](v T) (*T, error) { return &v, nil }

func memoryLimit(v string) (*resource.Quantity, error) {
	limit, err := resource.ParseQuantity(v)
	if err != nil {
		return nil, fmt.Errorf("%q is not a size such as 2Gi (or 0 for no limit)", v)
	}
	return &limit, nil
}

// addSpecFlags defines specFlags on fs; the function it returns lays
// those given on the command line over a spec, in the table's order.
func addSpecFlags(fs *pflag.FlagSet) func(*spec) error {
	lands := make([]func(*spec) error, len(specFlags))
	for i, f := range specFlags {
		lands[i] = f.lands(fs, f.name, f.usage)
	}
	return func(s *spec) error {
		for i, f := range specFlags {
			if fs.Changed(f.name) {
				if err := lands[i](s); err != nil {
					return err
				}
			}
		}
		return nil
	}
}
