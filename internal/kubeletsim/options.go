package kubeletsim

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"

	kubesimv1alpha1 "github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/stage"
)

// FakeNodeAnnotation marks the nodes a simulator outside kubesim manages
// by default: the annotation KWOK users already put on their fake nodes.
const FakeNodeAnnotation = "kwok.x-k8s.io/node"

// DefaultKubeletPort is the port simulated nodes advertise for their
// kubelet unless told otherwise: a real kubelet's.
const DefaultKubeletPort = 10250

// Refusal is what a simulated node's kubelet port answers to what it
// cannot do (the API server's logs, exec, attach, port-forward and node
// proxy): one line, whether the egress proxy refuses the connection or
// usage-metrics, which serves KWOK's Metric paths there, the request.
// node is its address, if known.
func Refusal(node string) string {
	who := "this node"
	if node != "" {
		who = "node " + node
	}
	return who + " is simulated, its pods run no containers: logs, exec, attach, port-forward and the kubelet's endpoints " +
		"are not available (only the paths of kwok.x-k8s.io Metrics are served, by usage-metrics)"
}

// Options configure a simulator.
type Options struct {
	// Config reaches the cluster; if nil, Run builds it from Kubeconfig.
	Config *rest.Config
	// Kubeconfig is the cluster's kubeconfig file; empty means the
	// in-cluster configuration.
	Kubeconfig string
	// ManageAllNodes manages every node (as in a kubesim cluster);
	// otherwise nodes must match both selectors below.
	ManageAllNodes bool
	// NodeSelector is a label selector for managed nodes.
	NodeSelector string
	// NodeAnnotationSelector is the same over annotations; empty means
	// kwok.x-k8s.io/node=fake unless NodeSelector is set.
	NodeAnnotationSelector string
	// Holder is the identity written into node Leases; two simulators
	// must have different ones.
	Holder string
	// LeaseDuration and LeaseRenewInterval govern node Leases.
	LeaseDuration      time.Duration
	LeaseRenewInterval time.Duration
	// NodeIPRange is where node InternalIPs come from.
	NodeIPRange string
	// PodIPRange, if set, serves pods on nodes that have no spec.podCIDR,
	// for clusters that allocate no node CIDRs; it must overlap no node's
	// podCIDR. Empty: such pods wait for their node's podCIDR.
	PodIPRange string
	// Version is kubesim's, reported as the nodes' runtime and kernel
	// version (kubesim-<Version>); their kubelet version is the cluster's.
	Version string
	// StageSet is the built-in stage set: fast or realistic.
	StageSet string
	// KubeletPort is the port simulated nodes advertise for their kubelet.
	KubeletPort int
}

// DefaultOptions are what `kubesim kubelet-sim` starts from.
func DefaultOptions() Options {
	host, _ := os.Hostname()
	return Options{
		Holder:             "kubesim-kubelet-sim@" + host,
		LeaseDuration:      40 * time.Second,
		LeaseRenewInterval: 10 * time.Second,
		NodeIPRange:        kubesimv1alpha1.DefaultNodeSubnet,
		Version:            "dev",
		StageSet:           stage.Sets[0],
		KubeletPort:        DefaultKubeletPort,
	}
}

// AddFlags binds the options to command-line flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "kubeconfig of the cluster (empty: in-cluster configuration)")
	fs.BoolVar(&o.ManageAllNodes, "manage-all-nodes", o.ManageAllNodes, "manage every node of the cluster")
	fs.StringVar(&o.NodeSelector, "node-selector", o.NodeSelector, "manage nodes with these labels (a label selector)")
	fs.StringVar(&o.NodeAnnotationSelector, "node-annotation-selector", o.NodeAnnotationSelector,
		"manage nodes with these annotations (default "+FakeNodeAnnotation+"=fake unless --node-selector is given)")
	fs.StringVar(&o.Holder, "holder", o.Holder, "identity written into node Leases; each simulator of a cluster needs its own")
	fs.DurationVar(&o.LeaseDuration, "node-lease-duration", o.LeaseDuration, "duration of node Leases")
	fs.DurationVar(&o.LeaseRenewInterval, "node-lease-renew-interval", o.LeaseRenewInterval, "how often node Leases are renewed")
	fs.StringVar(&o.NodeIPRange, "node-ip-range", o.NodeIPRange, "CIDR node InternalIPs are taken from")
	fs.StringVar(&o.StageSet, "stages", o.StageSet, "built-in stage set: "+strings.Join(stage.Sets, " or ")+"; the cluster's Stage objects add to it")
	fs.StringVar(&o.PodIPRange, "pod-ip-range", o.PodIPRange, "CIDR for pods on nodes without spec.podCIDR, for clusters that allocate no node CIDRs; it must overlap no node's podCIDR (default: none, such pods wait for their node's podCIDR)")
	fs.IntVar(&o.KubeletPort, "kubelet-port", o.KubeletPort, "port simulated nodes advertise for their kubelet")
}

// Validate checks the options a simulator cannot run with; errors name
// the flag.
func (o *Options) Validate() error {
	switch {
	case o.LeaseDuration < time.Second:
		// Leases count in whole seconds.
		return errors.New("--node-lease-duration: must be at least 1s, e.g. 40s")
	case o.LeaseRenewInterval <= 0:
		return errors.New("--node-lease-renew-interval: must be positive, e.g. 10s")
	case o.LeaseRenewInterval >= o.LeaseDuration:
		return fmt.Errorf("--node-lease-renew-interval: must be shorter than --node-lease-duration (%s), e.g. a quarter of it", o.LeaseDuration)
	case o.KubeletPort < 1 || o.KubeletPort > 65535:
		return fmt.Errorf("--kubelet-port: must be 1-65535, e.g. %d", DefaultKubeletPort)
	}
	return nil
}

// nodeFilter decides which nodes are candidates to manage.
func nodeFilter(opts Options) (func(*corev1.Node) bool, error) {
	if opts.ManageAllNodes {
		return func(*corev1.Node) bool { return true }, nil
	}
	annotations := opts.NodeAnnotationSelector
	if annotations == "" && opts.NodeSelector == "" {
		annotations = FakeNodeAnnotation + "=fake"
	}
	byLabel, err := labels.Parse(opts.NodeSelector)
	if err != nil {
		return nil, fmt.Errorf("--node-selector: %w", err)
	}
	byAnnotation, err := labels.Parse(annotations)
	if err != nil {
		return nil, fmt.Errorf("--node-annotation-selector: %w", err)
	}
	return func(n *corev1.Node) bool {
		return byLabel.Matches(labels.Set(n.Labels)) && byAnnotation.Matches(labels.Set(n.Annotations))
	}, nil
}
