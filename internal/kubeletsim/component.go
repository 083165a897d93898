package kubeletsim

import (
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"

	kubesimv1alpha1 "github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/deploy"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/component"
	"github.com/kubesim/kubesim/internal/version"
)

// ComponentName is the simulator's process in a kubesim cluster.
const ComponentName = "kubelet-sim"

// identity is the simulator's client. In system:nodes, API Priority and
// Fairness treats it as it treats kubelets: Lease and node-status writes at
// node-high priority, the rest at system, ahead of workloads. Without it a
// pod-delete storm starved the heartbeats and nodes went NotReady. (Being
// no system:node:<name> user, it gets no node authorizer or
// NodeRestriction.)
var identity = component.Identity{File: ComponentName, User: "kubesim:kubelet-sim", Groups: []string{"system:nodes"}}

// Component is the simulator as a process of a kubesim cluster.
func Component() component.Component {
	return component.Component{
		Name: ComponentName,
		Main: component.Main(ComponentName, componentDefaults, Run),
		Args: component.OwnArgs(componentOptions),
		// `create cluster`'s flags of the options it reads.
		Flags: []component.Flag{
			{Name: "disable-kubelet-sim", Usage: "run no kubelet simulator (nodes stay NotReady unless simulated from elsewhere)",
				Lands: component.At((*pflag.FlagSet).BoolVar, func(s *kubesimv1alpha1.ClusterSpec) *bool { return &s.DisableKubeletSim })},
		},
		Enabled: func(c *kubesimv1alpha1.Cluster) bool { return !c.DisableKubeletSim },
		// A Stage's author must hold what it has the simulator hold
		// (stageauthor.go); then the simulator is granted it.
		Setup:        setUpStageWebhook,
		Serve:        grantStageKinds,
		MemoryWeight: 10,
		Identity:     &identity,
		Grants: []component.Grant{
			{Role: deploy.KubeletSimClusterRole},
			{Role: deploy.KubeletSimLeasesRole, Namespace: corev1.NamespaceNodeLease},
			{Role: stageKindsRoleManifest},
		},
		CRDs: [][]byte{deploy.StageCRD},
	}
}

// componentDefaults are the simulator's options before its command line:
// DefaultOptions, reporting kubesim's version.
func componentDefaults() Options {
	o := DefaultOptions()
	o.Version = version.Version
	return o
}

func componentOptions(d clusterdir.Dir, c *kubesimv1alpha1.Cluster) *Options {
	// Node Leases last the node-monitor grace period; renewing one
	// twice in it (at 10,000 nodes four times kept the API server near
	// two cores) still leaves half the grace period after a late one.
	o := DefaultOptions()
	o.Kubeconfig = d.ComponentKubeconfig(identity.File)
	o.ManageAllNodes = true
	o.Holder = "kubesim-" + c.Name
	o.LeaseDuration = c.NodeLifecycle.NodeMonitorGracePeriod.Duration
	o.LeaseRenewInterval = c.NodeLeaseRenewInterval()
	o.NodeIPRange = c.Networking.NodeSubnet
	o.StageSet = c.Stages
	// Nodes advertise a real kubelet's port. The API server reaches it
	// through its egress proxy, which connects it to the cluster's
	// kubelet socket: usage-metrics serves KWOK's Metric paths there and
	// refuses the rest (logs, exec, …); without usage-metrics the proxy
	// refuses the connection (controlplane/egress.go).
	o.KubeletPort = DefaultKubeletPort
	return &o
}
