package v1alpha1

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Group, version and kind of the cluster configuration file.
const (
	GroupVersion = "kubesim.io/v1alpha1"
	ClusterKind  = "Cluster"
)

// DefaultClusterName is the name a cluster gets when none is given.
const DefaultClusterName = "kubesim"

// Cluster is the configuration of one simulated cluster: what a user writes
// in `create cluster --config FILE`, and, with Status filled in, what kubesim
// keeps in the cluster's cluster.yaml.
type Cluster struct {
	metav1.TypeMeta `json:",inline"`

	// Name is a DNS label; the kubeconfig context is kubesim-<name>.
	Name string `json:"name,omitempty"`

	// ClusterSpec is every option the cluster is made with, its fields at
	// the top level of the file.
	ClusterSpec `json:",inline"`

	// Status is written by kubesim, never by users.
	Status *ClusterStatus `json:"status,omitempty"`
}

// ClusterSpec is the options of a cluster: what a Cluster file, `create
// cluster`'s flags (internal/cli's specFlags table), a scenario's cluster
// (all but the fields internal/scenario's notInScenario lists) and
// kubesimtest's options set. Adding an option adds its field here, and a
// flag row or an entry on internal/cli's onlyInFiles list.
type ClusterSpec struct {
	Networking Networking `json:"networking,omitempty"`

	// AuditPolicy is the path of an audit.k8s.io/v1 Policy file; empty
	// means kubesim's default (metadata of every write).
	AuditPolicy string `json:"auditPolicy,omitempty"`

	NodeLifecycle NodeLifecycle `json:"nodeLifecycle,omitempty"`

	Scheduler Scheduler `json:"scheduler,omitempty"`

	// Nodes is how many simulated nodes (node-000000, …) to create with
	// the cluster; `kubesim scale node` changes the number later. With
	// NodeTemplate it is the shorthand for one unnamed node group.
	Nodes int `json:"nodes,omitempty"`
	// NodeTemplate is the path of a v1 Node manifest those nodes are
	// stamped from; empty means kubesim's default node.
	NodeTemplate string `json:"nodeTemplate,omitempty"`
	// NodeGroups are the simulated nodes to create with the cluster, in
	// groups of alike nodes; `kubesim scale node --group NAME` changes a
	// group's count later. Set NodeGroups or Nodes and NodeTemplate.
	NodeGroups []NodeGroup `json:"nodeGroups,omitempty"`

	// Stages is the built-in stage set the kubelet simulator runs: fast
	// (the default: no delays) or realistic (pods go through creation and
	// init containers with delays and jitter). Stage objects add to it.
	Stages string `json:"stages,omitempty"`
	// StageFiles are files of Stage manifests (kwok.x-k8s.io/v1alpha1,
	// several per file separated by ---) the cluster is made with: they
	// exist before the simulator starts, so they rule from the first node
	// and pod on. At every start, one that is missing is created again; one
	// that exists is left as it is.
	StageFiles []string `json:"stageFiles,omitempty"`

	// Descheduler, if it names a policy or profiles, runs sigs.k8s.io/descheduler
	// as a component of the cluster.
	Descheduler Descheduler `json:"descheduler,omitempty"`

	// Usage is the simulated resource usage of pods, served as
	// metrics.k8s.io (kubectl top, the HorizontalPodAutoscaler).
	Usage Usage `json:"usage,omitempty"`
	// Autoscaler adds a node autoscaler (create cluster --autoscaler).
	Autoscaler Autoscaler `json:"autoscaler,omitempty"`
	// Addons are upstream controllers the cluster runs beside its control
	// plane, each as a component of its own (create cluster --addons):
	// one of Addons.
	Addons []string `json:"addons,omitempty"`
	// KueueConfig is the path of a Kueue Configuration file
	// (config.kueue.x-k8s.io/v1beta2) for the kueue add-on, which it
	// implies (create cluster --kueue-config).
	KueueConfig string `json:"kueueConfig,omitempty"`

	// HorizontalPodAutoscaler tunes the controller-manager's HPA
	// controller, so autoscaling can be watched in seconds.
	HorizontalPodAutoscaler HorizontalPodAutoscaler `json:"horizontalPodAutoscaler,omitempty"`

	// DisableKubeletSim leaves the built-in kubelet simulator out, for a
	// control plane whose nodes are simulated from elsewhere.
	DisableKubeletSim bool `json:"disableKubeletSim,omitempty"`

	// DisableDPDBController leaves the DistributedPodDisruptionBudget
	// controller out (its CRD is installed all the same), for one run
	// from elsewhere, such as deploy/dpdb.
	DisableDPDBController bool `json:"disableDPDBController,omitempty"`

	// MemoryLimit is the memory budget of the control plane's processes
	// together (default 1536Mi; "0" for none), shared out by weight: the API
	// server 45 %, the controller-manager and the scheduler 15 % each, etcd
	// and the kubelet simulator 10 % each, the dpdb controller, the
	// descheduler and the usage-metrics component 5 % each (shares of the
	// weights of the components the cluster runs). Each process holds its Go memory to its share
	// while its live data fits in half of it, and beyond that to twice its
	// live data (at most 2Gi more than it), rather than failing or
	// collecting without end: a soft limit, never an out-of-memory kill.
	MemoryLimit *resource.Quantity `json:"memoryLimit,omitempty"`

	// TimeScale is how many seconds of cluster time pass per real second,
	// a whole number from 1 (real time, the default) to MaxTimeScale: every
	// component runs on the one scaled clock, so upstream's own timings (a
	// 300 s eviction, a 5 min HPA stabilization) pass N times faster,
	// unchanged. Set when the cluster is made; the clock keeps running,
	// scaled, while it is stopped.
	TimeScale int32 `json:"timeScale,omitempty"`

	// Kubernetes is the minor version whose upstream control plane the
	// cluster runs ("1.35"): that release's kube-apiserver,
	// kube-controller-manager and kube-scheduler. Empty means the one
	// kubesim is built on; create sets it. `kubesim version` lists the
	// versions a build has.
	Kubernetes string `json:"kubernetes,omitempty"`

	// ExtraArgs are upstream flags added to an upstream component's command
	// line, by component (kube-apiserver, kube-controller-manager,
	// kube-scheduler): ["--feature-gates=SomeGate=true", "--v=4"]. A flag
	// given here replaces kubesim's own value for it.
	ExtraArgs map[string][]string `json:"extraArgs,omitempty"`

	// From is a snapshot file (`kubesim snapshot export`) the cluster is
	// made a clone of: its nodes, workloads and pods where they ran.
	From string `json:"from,omitempty"`
	// FromContext is a kubeconfig context whose cluster is read (get and
	// list only) and cloned, as From would clone its export. Give one of
	// From and FromContext.
	FromContext string `json:"fromContext,omitempty"`
}

// Networking holds the cluster's addresses.
type Networking struct {
	// APIServerPort is the loopback port of the API server; 0 picks a free one.
	APIServerPort int `json:"apiServerPort,omitempty"`
	// PodSubnet is the range node pod CIDRs are cut from, one per node
	// (a /22 by default: see NodeCIDRMaskSize); it must hold a CIDR for
	// every node.
	PodSubnet string `json:"podSubnet,omitempty"`
	// NodeCIDRMaskSize is the prefix length of each node's pod CIDR
	// (kube-controller-manager's --node-cidr-mask-size). 0: the smallest
	// CIDR that holds DefaultPodsPerNode pods and the largest pods
	// capacity the cluster's node groups and node template declare.
	NodeCIDRMaskSize int `json:"nodeCIDRMaskSize,omitempty"`
	// ServiceSubnet is the ClusterIP range; it must not overlap PodSubnet.
	ServiceSubnet string `json:"serviceSubnet,omitempty"`
	// NodeSubnet is where simulated nodes' InternalIPs come from.
	NodeSubnet string `json:"nodeSubnet,omitempty"`
}

// NodeLifecycle tunes the node-lifecycle controller, so node failures can
// be detected in seconds rather than upstream's minutes.
type NodeLifecycle struct {
	// NodeMonitorPeriod is how often the controller checks nodes.
	NodeMonitorPeriod *metav1.Duration `json:"nodeMonitorPeriod,omitempty"`
	// NodeMonitorGracePeriod is how long a silent node stays Ready.
	NodeMonitorGracePeriod *metav1.Duration `json:"nodeMonitorGracePeriod,omitempty"`
	// NodeStartupGracePeriod is how long a new node may take to become Ready.
	NodeStartupGracePeriod *metav1.Duration `json:"nodeStartupGracePeriod,omitempty"`
	// PodEvictionToleration is how long pods stay on a NotReady or
	// unreachable node before taint-based eviction: the tolerations the
	// API server gives pods that set none (upstream: 300s). Whole seconds.
	PodEvictionToleration *metav1.Duration `json:"podEvictionToleration,omitempty"`
}

// Usage configures the component that serves metrics.k8s.io from
// ResourceUsages and ClusterResourceUsages (kwok.x-k8s.io).
type Usage struct {
	// Disabled leaves the component out: no metrics.k8s.io, kubectl top
	// fails as without a metrics-server (the CRDs are installed all the
	// same).
	Disabled bool `json:"disabled,omitempty"`
	// DefaultRequestPercent is what a container uses where no usage is
	// declared for it, in percent of its requests (of its limits where it
	// has none): default 50.
	DefaultRequestPercent *int32 `json:"defaultRequestPercent,omitempty"`
}

// HorizontalPodAutoscaler holds the HPA controller's timing, upstream's
// flags of the same names; unset: upstream's defaults.
type HorizontalPodAutoscaler struct {
	// SyncPeriod is how often each HPA is evaluated (upstream: 15s).
	SyncPeriod *metav1.Duration `json:"syncPeriod,omitempty"`
	// DownscaleStabilization is how long the controller looks back
	// before it scales in (upstream: 5m).
	DownscaleStabilization *metav1.Duration `json:"downscaleStabilization,omitempty"`
}

// Descheduler runs the descheduler every Interval with a policy file or
// named profiles (one or the other).
type Descheduler struct {
	// Policy is the path of a descheduler/v1alpha2 DeschedulerPolicy file.
	Policy string `json:"policy,omitempty"`
	// Profiles are named profiles, as `kubesim deschedule --profile` takes.
	Profiles []string `json:"profiles,omitempty"`
	// Interval between descheduling cycles (default 1m).
	Interval *metav1.Duration `json:"interval,omitempty"`
}

// Enabled reports whether the cluster runs a descheduler.
func (d Descheduler) Enabled() bool { return d.Policy != "" || len(d.Profiles) > 0 }

// Addons are the add-ons a cluster may run (ClusterSpec.Addons): kueue is
// Kueue's manager, with its CRDs and webhooks.
var Addons = []string{AddonKueue}

// AddonKueue is Kueue's add-on.
const AddonKueue = "kueue"

// HasAddon reports whether the cluster runs the add-on name.
func (c *ClusterSpec) HasAddon(name string) bool {
	return slices.Contains(c.Addons, name) || (name == AddonKueue && c.KueueConfig != "")
}

// StageSets are the built-in stage sets, the first the default.
var StageSets = []string{"fast", "realistic"}

// Scheduler tunes kube-scheduler.
type Scheduler struct {
	// PercentageOfNodesToScore, if set, overrides upstream's adaptive
	// share of feasible nodes the scheduler scores per pod (42% of 1,000
	// nodes): fewer is faster, and less exact in spreading.
	PercentageOfNodesToScore *int32 `json:"percentageOfNodesToScore,omitempty"`
	// ExplainPods is how many pods' last scheduling attempt the scheduler
	// keeps in memory for `kubesim explain`, oldest dropped first; 0
	// records nothing. Default 1000.
	ExplainPods *int32 `json:"explainPods,omitempty"`
}

// The default address ranges, disjoint. With a /22 per node (1,022 pods)
// the pod subnet holds 16,384 nodes; the node subnet 65,534 node
// InternalIPs; the service subnet 1,048,574 ClusterIPs.
const (
	DefaultPodSubnet     = "10.0.0.0/8"
	DefaultServiceSubnet = "172.16.0.0/12"
	DefaultNodeSubnet    = "192.168.0.0/16"
)

// DefaultMemoryLimit is Cluster.MemoryLimit unless set.
var DefaultMemoryLimit = resource.MustParse("1536Mi")

// DefaultExplainPods is Scheduler.ExplainPods unless set.
const DefaultExplainPods int32 = 1000

// ClusterStatus is what kubesim resolved and chose for the cluster.
type ClusterStatus struct {
	KubernetesVersion string      `json:"kubernetesVersion"`
	KubesimVersion    string      `json:"kubesimVersion"`
	CreatedAt         metav1.Time `json:"createdAt"`
	Ports             Ports       `json:"ports"`
	// AuditPolicy and DeschedulerPolicy are the policies resolved when the
	// cluster was made (from the user's files, profiles or defaults); the
	// components' files are written from them at every start.
	AuditPolicy       string `json:"auditPolicy,omitempty"`
	DeschedulerPolicy string `json:"deschedulerPolicy,omitempty"`
	// InstanceTypes is Autoscaler.Karpenter.InstanceTypes's file, read and
	// checked when the cluster was made.
	InstanceTypes string `json:"instanceTypes,omitempty"`
	// KueueConfig is KueueConfig's file, read and checked when the
	// cluster was made.
	KueueConfig string `json:"kueueConfig,omitempty"`
	// Stages are the Stage manifests of StageFiles, read when the cluster
	// was made, one document each.
	Stages []string `json:"stages,omitempty"`
	// NodeCIDRMaskSize is the prefix length of every node's pod CIDR,
	// chosen when the cluster was made; 0: made before kubesim kept it,
	// when it was always 24 (see Cluster.NodeCIDRMask).
	NodeCIDRMaskSize int `json:"nodeCIDRMaskSize,omitempty"`
	// FormatVersion is the layout of the cluster's files (certificates,
	// ports, policies) it was made or last started with; start brings an
	// older one up to date. 0: made before kubesim kept it.
	FormatVersion int `json:"formatVersion,omitempty"`
	// Clock is the cluster's scaled clock, chosen when it was made; nil:
	// real time.
	Clock *Clock `json:"clock,omitempty"`
}

// Clock is a scaled clock: cluster time = Epoch + (real time - Anchor) x
// Scale, all in Unix nanoseconds, as every process of the cluster reads it
// (patches/go: KUBESIM_TIME_SCALE, _EPOCH and _ANCHOR).
type Clock struct {
	Scale  int32 `json:"scale"`
	Epoch  int64 `json:"epochUnixNano"`
	Anchor int64 `json:"anchorUnixNano"`
}

// Now is the cluster's time when the real time is real.
func (c Clock) Now(real time.Time) time.Time {
	return time.Unix(0, c.Epoch+(real.UnixNano()-c.Anchor)*int64(c.Scale))
}

// MaxTimeScale bounds TimeScale: past it a second of cluster time is
// under a millisecond of real time, which epoll's millisecond timeouts
// and the control plane's own work cannot keep.
const MaxTimeScale = 1000

// CheckTimeScale checks a time scale given: 0 too, which in the field
// means "not set" but given (--time-scale 0, timeScale: 0) would run the
// cluster in real time unasked. The caller names the field or flag.
func CheckTimeScale(n int32) error {
	if n < 1 || n > MaxTimeScale {
		return fmt.Errorf("must be a whole number from 1 (real time) to %d, got %d", MaxTimeScale, n)
	}
	return nil
}

// SetDefaults fills every unset option with kubesim's default.
func (c *Cluster) SetDefaults() {
	c.APIVersion, c.Kind = GroupVersion, ClusterKind
	if c.Name == "" {
		c.Name = DefaultClusterName
	}
	if c.Networking.PodSubnet == "" {
		c.Networking.PodSubnet = DefaultPodSubnet
	}
	if c.Networking.ServiceSubnet == "" {
		c.Networking.ServiceSubnet = DefaultServiceSubnet
	}
	if c.Networking.NodeSubnet == "" {
		c.Networking.NodeSubnet = DefaultNodeSubnet
	}
	nl := &c.NodeLifecycle
	setDuration(&nl.NodeMonitorPeriod, 5*time.Second)
	setDuration(&nl.NodeMonitorGracePeriod, 50*time.Second)
	setDuration(&nl.NodeStartupGracePeriod, 60*time.Second)
	setDuration(&nl.PodEvictionToleration, 300*time.Second)
	if c.Stages == "" {
		c.Stages = StageSets[0]
	}
	if c.MemoryLimit == nil {
		limit := DefaultMemoryLimit.DeepCopy()
		c.MemoryLimit = &limit
	}
	if c.Descheduler.Enabled() {
		setDuration(&c.Descheduler.Interval, time.Minute)
	}
	if c.Usage.DefaultRequestPercent == nil {
		p := int32(50)
		c.Usage.DefaultRequestPercent = &p
	}
	hpa := &c.HorizontalPodAutoscaler
	setDuration(&hpa.SyncPeriod, 15*time.Second)
	setDuration(&hpa.DownscaleStabilization, 5*time.Minute)
}

func setDuration(d **metav1.Duration, def time.Duration) {
	if *d == nil {
		*d = &metav1.Duration{Duration: def}
	}
}

// Validate checks a defaulted config; each error names the field at fault.
func (c *Cluster) Validate() error {
	if err := ValidateName(c.Name); err != nil {
		return err
	}
	if err := CheckNodeCount(c.Nodes); err != nil {
		return fmt.Errorf("nodes (--nodes): %w", err)
	}
	if len(c.NodeGroups) > 0 && (c.Nodes != 0 || c.NodeTemplate != "") {
		return errors.New("nodeGroups: set nodeGroups or nodes and nodeTemplate (--nodes, --node-template), not both; nodes: N is one unnamed group")
	}
	if err := ValidateNodeGroups("nodeGroups", c.NodeGroups); err != nil {
		return err
	}
	if p := c.Scheduler.PercentageOfNodesToScore; p != nil && (*p < 0 || *p > 100) {
		return fmt.Errorf("scheduler.percentageOfNodesToScore: must be between 0 and 100, got %d", *p)
	}
	if p := c.Scheduler.ExplainPods; p != nil && *p < 0 {
		return fmt.Errorf("scheduler.explainPods: must be 0 (record nothing) or more, got %d", *p)
	}
	if c.TimeScale != 0 { // 0: not set, real time
		if err := CheckTimeScale(c.TimeScale); err != nil {
			return fmt.Errorf("timeScale (--time-scale): %w", err)
		}
	}
	if m := c.MemoryLimit; m != nil && m.Sign() < 0 {
		return fmt.Errorf("memoryLimit: must be a size such as 2Gi, or 0 for no limit, got %s", m)
	}
	if p := c.Networking.APIServerPort; p < 0 || p > 65535 {
		return fmt.Errorf("networking.apiServerPort: %d is not a port number (1-65535, or 0 to pick a free one)", p)
	}
	_, pods, err := net.ParseCIDR(c.Networking.PodSubnet)
	if err != nil || pods.IP.To4() == nil {
		return fmt.Errorf("networking.podSubnet: %q is not an IPv4 CIDR such as 10.0.0.0/8", c.Networking.PodSubnet)
	}
	if m := c.Networking.NodeCIDRMaskSize; m != 0 && (m < MinNodeCIDRMaskSize || m > MaxNodeCIDRMaskSize) {
		return fmt.Errorf("networking.nodeCIDRMaskSize: must be between %d and %d (0: sized to the nodes' pods capacity), got %d", MinNodeCIDRMaskSize, MaxNodeCIDRMaskSize, m)
	}
	_, services, err := net.ParseCIDR(c.Networking.ServiceSubnet)
	if err != nil || services.IP.To4() == nil {
		return fmt.Errorf("networking.serviceSubnet: %q is not an IPv4 CIDR such as 172.16.0.0/12", c.Networking.ServiceSubnet)
	}
	if ones, _ := services.Mask.Size(); ones < 12 || ones > 28 {
		return fmt.Errorf("networking.serviceSubnet: %q must be between a /12 and a /28", c.Networking.ServiceSubnet)
	}
	if overlap(pods, services) {
		return fmt.Errorf("networking.serviceSubnet: %s overlaps networking.podSubnet %s; choose disjoint ranges", services, pods)
	}
	_, nodes, err := net.ParseCIDR(c.Networking.NodeSubnet)
	if err != nil || nodes.IP.To4() == nil {
		return fmt.Errorf("networking.nodeSubnet: %q is not an IPv4 CIDR such as 192.168.0.0/16", c.Networking.NodeSubnet)
	}
	if overlap(nodes, pods) {
		return fmt.Errorf("networking.nodeSubnet: %s overlaps networking.podSubnet %s; choose disjoint ranges", nodes, pods)
	}
	if overlap(nodes, services) {
		return fmt.Errorf("networking.nodeSubnet: %s overlaps networking.serviceSubnet %s; choose disjoint ranges", nodes, services)
	}
	// Node counts against the smallest node CIDR the cluster can have;
	// create checks again with the one it chooses.
	if err := c.CheckNodeAddresses(c.DeclaredNodes(), c.MinNodeCIDRMask()); err != nil {
		return err
	}
	nl := c.NodeLifecycle
	for _, d := range []struct {
		field string
		value *metav1.Duration
	}{
		{"nodeLifecycle.nodeMonitorPeriod", nl.NodeMonitorPeriod},
		{"nodeLifecycle.nodeMonitorGracePeriod", nl.NodeMonitorGracePeriod},
		{"nodeLifecycle.nodeStartupGracePeriod", nl.NodeStartupGracePeriod},
	} {
		if d.value.Duration <= 0 {
			return fmt.Errorf("%s: must be a positive duration such as 5s, got %s", d.field, d.value.Duration)
		}
	}
	if d := nl.PodEvictionToleration.Duration; d < 0 || d%time.Second != 0 {
		return fmt.Errorf("nodeLifecycle.podEvictionToleration: must be whole seconds such as 30s (0 evicts at once), got %s", d)
	}
	if !slices.Contains(StageSets, c.Stages) {
		return fmt.Errorf("stages: %q is not a stage set; use one of %s", c.Stages, strings.Join(StageSets, ", "))
	}
	for _, a := range c.Addons {
		if !slices.Contains(Addons, a) {
			return fmt.Errorf("addons (--addons): %q is not an add-on kubesim offers; use %s", a, strings.Join(Addons, ", "))
		}
	}
	if p := *c.Usage.DefaultRequestPercent; p < 0 {
		return fmt.Errorf("usage.defaultRequestPercent: %d is negative; give a percentage of requests of 0 or more, such as 50", p)
	}
	if d := c.HorizontalPodAutoscaler.SyncPeriod.Duration; d <= 0 {
		return fmt.Errorf("horizontalPodAutoscaler.syncPeriod (--horizontal-pod-autoscaler-sync-period): must be a positive duration such as 15s, got %s", d)
	}
	if d := c.HorizontalPodAutoscaler.DownscaleStabilization.Duration; d < 0 {
		return fmt.Errorf("horizontalPodAutoscaler.downscaleStabilization (--horizontal-pod-autoscaler-downscale-stabilization): must be 0 or a positive duration such as 5m, got %s", d)
	}
	if ds := c.Descheduler; ds.Policy != "" && len(ds.Profiles) > 0 {
		return errors.New("descheduler: set policy or profiles, not both")
	}
	if ds := c.Descheduler; !ds.Enabled() && ds.Interval != nil {
		return errors.New("descheduler.interval: set descheduler.policy or descheduler.profiles too (--descheduler-policy, --descheduler-profile)")
	}
	if ds := c.Descheduler; ds.Enabled() && ds.Interval.Duration <= 0 {
		return fmt.Errorf("descheduler.interval: must be a positive duration such as 30s, got %s", ds.Interval.Duration)
	}
	if nl.NodeMonitorGracePeriod.Duration <= nl.NodeMonitorPeriod.Duration {
		return fmt.Errorf("nodeLifecycle.nodeMonitorGracePeriod: %s must be longer than nodeLifecycle.nodeMonitorPeriod %s",
			nl.NodeMonitorGracePeriod.Duration, nl.NodeMonitorPeriod.Duration)
	}
	return nil
}

// MaxNodes bounds a cluster's simulated nodes: they are named node-NNNNNN,
// six digits.
const MaxNodes = 1_000_000

// CheckNodeCount checks a number of simulated nodes; the caller names the
// field or flag it came from.
func CheckNodeCount(n int) error {
	if n < 0 || n > MaxNodes {
		return fmt.Errorf("must be between 0 and %d, got %d", MaxNodes, n)
	}
	return nil
}

func overlap(a, b *net.IPNet) bool { return a.Contains(b.IP) || b.Contains(a.IP) }

// ValidateName checks that name can name a cluster: a DNS label.
func ValidateName(name string) error {
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return fmt.Errorf("invalid cluster name %q: must be a DNS label (at most 63 lowercase letters, digits or '-', starting and ending with a letter or digit)", name)
	}
	return nil
}

// Autoscaler is the cluster's node autoscaler, if any.
type Autoscaler struct {
	// Karpenter, if set, runs Karpenter's controllers with its KWOK cloud
	// provider: the cluster's NodePools launch simulated nodes, and
	// Karpenter consolidates them.
	Karpenter *Karpenter `json:"karpenter,omitempty"`
}

// Karpenter is the Karpenter component's configuration.
type Karpenter struct {
	// InstanceTypes is the path of a JSON file of instance types in the
	// shape of the KWOK provider's catalog (name, resources, architecture,
	// operatingSystems, offerings with prices, zones and capacity types);
	// empty: the provider's built-in catalog. It is read when the cluster
	// is made (Status.InstanceTypes).
	InstanceTypes string `json:"instanceTypes,omitempty"`
}
