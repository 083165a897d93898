package kubeletsim

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/kubesim/kubesim/internal/stage"
)

// AddFlags binds the options to command-line flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.ManageAllNodes, "manage-all-nodes", o.ManageAllNodes, "manage every node of the cluster")
	fs.StringVar(&o.NodeSelector, "node-selector", o.NodeSelector, "manage nodes with these labels (a label selector)")
	fs.StringVar(&o.NodeAnnotationSelector, "node-annotation-selector", o.NodeAnnotationSelector,
		"manage nodes with these annotations (default "+FakeNodeAnnotation+"=fake unless --node-selector is given)")
	fs.StringVar(&o.Holder, "holder", o.Holder, "identity written into node Leases; each simulator of a cluster needs its own")
	fs.DurationVar(&o.LeaseDuration, "node-lease-duration", o.LeaseDuration, "duration of node Leases")
	fs.DurationVar(&o.LeaseRenewInterval, "node-lease-renew-interval", o.LeaseRenewInterval, "how often node Leases are renewed")
	fs.StringVar(&o.NodeIPRange, "node-ip-range", o.NodeIPRange, "CIDR node InternalIPs are taken from")
	fs.StringVar(&o.StageSet, "stages", o.StageSet, "built-in stage set: "+strings.Join(stage.Sets, " or ")+"; the cluster's Stage objects add to it")
	fs.StringVar(&o.PodIPRange, "pod-ip-range", o.PodIPRange, "CIDR for pods on nodes without spec.podCIDR")
}
