package kubesimtest

import (
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

// An Option shapes the cluster Start makes. A bad option fails Start with
// one line naming it.
type Option func(*settings) error

// settings is what the options ask for; it becomes kubesim's Cluster file.
type settings struct {
	// spec is the Cluster file's options, as the options set them; the
	// node groups and stage files are added from groups and stages.
	spec   v1alpha1.ClusterSpec
	groups []*nodeGroup // in the order given
	stages []string     // Stage manifests, written as the file's stageFiles
}

// Spec sets options of the Cluster file directly (kubesim.io/v1alpha1
// ClusterSpec: any field a Cluster file takes, such as MemoryLimit or
// Networking), after the options before it; kubesim checks them when it
// makes the cluster. The typed options above check their values first:
// prefer them where there is one. Node groups and stage files come from
// Nodes, NodeGroup and Stages.
func Spec(set func(*v1alpha1.ClusterSpec)) Option {
	return func(s *settings) error {
		set(&s.spec)
		return nil
	}
}

// StageSet chooses the built-in stage set: "fast" (kubesim's default: pods
// Running at once) or "realistic" (creation and init containers take 1–3 s).
func StageSet(name string) Option {
	return func(s *settings) error {
		if name != "fast" && name != "realistic" {
			return fmt.Errorf("kubesimtest.StageSet(%q): want fast or realistic", name)
		}
		s.spec.Stages = name
		return nil
	}
}

// Stages makes the cluster with these Stage manifests (kwok.x-k8s.io/v1alpha1
// YAML, several documents each if you like), as the Cluster file's
// stageFiles: they exist before the simulator starts, so the first node and
// pod already go through them. A bad one fails Start with kubesim's error.
func Stages(manifests ...string) Option {
	return func(s *settings) error {
		s.stages = append(s.stages, manifests...)
		return nil
	}
}

// NodeFailure makes node failures show within a test: a node whose kubelet
// stopped (StopNode) turns NotReady after notReadyAfter, and its pods are
// evicted evictAfter later (whole seconds; 0 evicts at once). Upstream's
// defaults are 50s and 300s.
func NodeFailure(notReadyAfter, evictAfter time.Duration) Option {
	return func(s *settings) error {
		if notReadyAfter < 2*time.Second {
			return fmt.Errorf("kubesimtest.NodeFailure: notReadyAfter %s is too short for Lease renewals; want 2s or more", notReadyAfter)
		}
		if evictAfter < 0 || evictAfter%time.Second != 0 {
			return fmt.Errorf("kubesimtest.NodeFailure: evictAfter %s; want whole seconds such as 2s (0 evicts at once)", evictAfter)
		}
		// The node-lifecycle controller checks nodes every period, which
		// must be shorter than the grace period; 1s keeps detection prompt.
		s.spec.NodeLifecycle = v1alpha1.NodeLifecycle{
			NodeMonitorPeriod:      duration(min(time.Second, notReadyAfter/2)),
			NodeMonitorGracePeriod: duration(notReadyAfter),
			PodEvictionToleration:  duration(evictAfter),
		}
		return nil
	}
}

// Descheduler runs sigs.k8s.io/descheduler as a component every interval
// with the named profiles (those `kubesim deschedule --profile` takes).
func Descheduler(interval time.Duration, profiles ...string) Option {
	return func(s *settings) error {
		if interval <= 0 || len(profiles) == 0 {
			return fmt.Errorf("kubesimtest.Descheduler: want a positive interval and at least one profile, such as Descheduler(5*time.Second, \"TopologyAndDuplicates\")")
		}
		s.spec.Descheduler = v1alpha1.Descheduler{Profiles: profiles, Interval: duration(interval)}
		return nil
	}
}

// WithoutDPDBController leaves out the DistributedPodDisruptionBudget
// controller (on by default; its CRD is installed all the same).
func WithoutDPDBController() Option {
	return func(s *settings) error {
		s.spec.DisableDPDBController = true
		return nil
	}
}

// WithoutUsageMetrics leaves out the component that serves metrics.k8s.io
// from declared usage (kubectl top, CPU and memory HPAs): on by default.
func WithoutUsageMetrics() Option {
	return func(s *settings) error {
		s.spec.Usage.Disabled = true
		return nil
	}
}

// HorizontalPodAutoscaler makes HPAs react within a test: each is
// evaluated every syncPeriod and scales in once downscaleStabilization has
// passed (upstream: 15s and 5m). Usage is declared with KWOK's
// ClusterResourceUsage and ResourceUsage (kwok.x-k8s.io/v1alpha1), which
// a test may apply and change at any time.
func HorizontalPodAutoscaler(syncPeriod, downscaleStabilization time.Duration) Option {
	return func(s *settings) error {
		if syncPeriod <= 0 || downscaleStabilization < 0 {
			return fmt.Errorf("kubesimtest.HorizontalPodAutoscaler(%s, %s): want a positive sync period and a stabilization of 0 or more, such as (2*time.Second, 10*time.Second)", syncPeriod, downscaleStabilization)
		}
		s.spec.HorizontalPodAutoscaler = v1alpha1.HorizontalPodAutoscaler{
			SyncPeriod:             duration(syncPeriod),
			DownscaleStabilization: duration(downscaleStabilization),
		}
		return nil
	}
}

// TimeScale runs the cluster's clock n times faster than real time: every
// component lives on that one clock, so upstream's own timings (a 300s
// eviction, a 5m HPA stabilization) pass n times sooner, unchanged. The
// test itself stays on real time: a wait of d in cluster time is d/n of
// the test's. Needs a kubesim built with make (the scaled clock of
// patches/go).
func TimeScale(n int) Option {
	return func(s *settings) error {
		if n < 1 || n > v1alpha1.MaxTimeScale {
			return fmt.Errorf("kubesimtest.TimeScale(%d): want a whole number from 1 (real time) to %d", n, v1alpha1.MaxTimeScale)
		}
		s.spec.TimeScale = int32(n)
		return nil
	}
}

// Kubernetes runs the cluster's control plane at this Kubernetes minor
// version ("1.35"): that release's API server, controller-manager and
// scheduler, built beside kubesim (`kubesim version` lists them). Without
// it the cluster runs the version kubesim is built on.
func Kubernetes(minor string) Option {
	return func(s *settings) error {
		if !minorVersion.MatchString(minor) {
			return fmt.Errorf("kubesimtest.Kubernetes(%q): want a minor version such as 1.35", minor)
		}
		s.spec.Kubernetes = minor
		return nil
	}
}

var minorVersion = regexp.MustCompile(`^v?1\.\d+(\.\d+)?$`)

// ExtraArgs adds upstream flags to an upstream component's command line
// (kube-apiserver, kube-controller-manager or kube-scheduler); kubesim
// checks them against the component's flags.
func ExtraArgs(component string, args ...string) Option {
	return func(s *settings) error {
		components := []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"}
		if !slices.Contains(components, component) {
			return fmt.Errorf("kubesimtest.ExtraArgs(%q): want kube-apiserver, kube-controller-manager or kube-scheduler", component)
		}
		if s.spec.ExtraArgs == nil {
			s.spec.ExtraArgs = map[string][]string{}
		}
		s.spec.ExtraArgs[component] = append(s.spec.ExtraArgs[component], args...)
		return nil
	}
}
