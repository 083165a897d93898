package controlplane

import (
	"context"
	"slices"
	"strings"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
)

// Names of the processes of a cluster, as `kubesim component NAME` runs
// them and as their logs are called.
const (
	Etcd                  = "etcd"
	KubeAPIServer         = "kube-apiserver"
	KubeControllerManager = "kube-controller-manager"
	KubeScheduler         = "kube-scheduler"
	KubeletSim            = "kubelet-sim"
	Descheduler           = "descheduler"
	DPDBController        = "dpdb-controller"
	Supervisor            = "supervisor"
)

// Component is one process of the control plane.
type Component struct {
	Name string
	// Args are the arguments after `kubesim component NAME`, derived from
	// the cluster config each time the component (re)starts.
	Args func(d clusterdir.Dir, c *v1alpha1.Cluster) []string
	// Ready, if set, must succeed before the next component starts.
	Ready func(ctx context.Context, d clusterdir.Dir, c *v1alpha1.Cluster) error
	// Setup, if set, runs once the component is ready, before the next
	// starts; it is retried until it succeeds.
	Setup func(ctx context.Context, d clusterdir.Dir, c *v1alpha1.Cluster) error
	// Serve, if set, runs in the supervisor once Setup is done, for as long
	// as the cluster runs: a controller of kubesim's own that needs the
	// admin's rights (granting the simulator the kinds of Stages).
	Serve func(ctx context.Context, d clusterdir.Dir, logf func(string, ...any))
	// Prepare, if set, writes the files the component reads before each
	// start.
	Prepare func(d clusterdir.Dir, c *v1alpha1.Cluster) error
	// Ports returns pointers to the config's ports this component binds,
	// so the supervisor can move them if another process took one.
	Ports func(c *v1alpha1.Cluster) []*int
	// PortsPrivate: no other component uses its ports, so none restarts
	// when they move (the API server reaches etcd by its unix socket).
	PortsPrivate bool
	// StartAfter, if set, names an earlier component: this one's process
	// starts as soon as that one is ready (and set up), not in its turn;
	// its own Ready and Setup still wait for its turn. For a component whose
	// start-up takes long and needs nothing, and which waits for the API
	// itself.
	StartAfter string
	// HeldDuringOutages: the supervisor stops the component while the API
	// server does not answer and starts it afresh when it does (see
	// outage.go).
	HeldDuringOutages bool
}

// Components is the control plane, in start order.
func Components() []Component {
	return []Component{
		{Name: Etcd, Args: ownArgs(etcdOptions), Ready: etcdReady, PortsPrivate: true,
			Ports: func(c *v1alpha1.Cluster) []*int { return []*int{&c.Status.Ports.Etcd, &c.Status.Ports.EtcdPeer} }},
		{Name: KubeAPIServer, Args: apiServerArgs, Ready: apiServerServing, Setup: bootstrapThenReady, Serve: grantStageKinds, Prepare: writeAPIServerFiles,
			Ports: func(c *v1alpha1.Cluster) []*int { return []*int{&c.Status.Ports.APIServer} }},
		{Name: KubeControllerManager, Args: controllerManagerArgs, HeldDuringOutages: true},
		{Name: KubeScheduler, Args: schedulerArgs, Prepare: prepareScheduler,
			Ports: func(c *v1alpha1.Cluster) []*int { return []*int{&c.Status.Ports.SchedulerExplain} }},
		{Name: KubeletSim, Args: ownArgs(kubeletSimOptions)},
		{Name: Descheduler, Args: ownArgs(deschedulerOptions), Prepare: writeDeschedulerPolicy},
		// Its webhook must serve before the cluster counts as started; its
		// process starts with the API server's, so it does.
		{Name: DPDBController, Args: ownArgs(dpdbOptions), Prepare: prepareDPDB, StartAfter: Etcd,
			Ready: dpdbWebhookReady, Setup: registerDPDBWebhook,
			Ports: func(c *v1alpha1.Cluster) []*int { return []*int{&c.Status.Ports.DPDBWebhook} }},
	}
}

// UpstreamComponents are the components built from k8s.io/kubernetes,
// whose flags users may add to (Cluster.extraArgs).
var UpstreamComponents = []string{KubeAPIServer, KubeControllerManager, KubeScheduler}

// Enabled reports whether the cluster runs the component: the simulator
// and the dpdb controller unless disabled, the descheduler if configured,
// all others always.
func (comp Component) Enabled(c *v1alpha1.Cluster) bool {
	switch comp.Name {
	case KubeletSim:
		return !c.DisableKubeletSim
	case Descheduler:
		return c.Descheduler.Enabled()
	case DPDBController:
		return !c.DisableDPDBController
	}
	return true
}

// EnabledComponents names the components the cluster runs, in start order.
func EnabledComponents(c *v1alpha1.Cluster) []string {
	var names []string
	for _, comp := range Components() {
		if comp.Enabled(c) {
			names = append(names, comp.Name)
		}
	}
	return names
}

// LogNames lists every log a cluster may have: one per component, the
// supervisor's and the API server's audit log.
func LogNames() []string {
	var names []string
	for _, c := range Components() {
		names = append(names, c.Name)
	}
	return append(names, Supervisor, auditLog)
}

// commandLine is a component's full command line: its arguments, with the
// user's extra arguments laid over them (a flag the user gives replaces
// ours of the same name, as the last one given would win anyway).
func commandLine(comp Component, d clusterdir.Dir, c *v1alpha1.Cluster) []string {
	args := comp.Args(d, c)
	extra := c.ExtraArgs[comp.Name]
	if len(extra) == 0 {
		return args
	}
	given := map[string]bool{}
	for _, a := range extra {
		given[flagName(a)] = true
	}
	args = slices.DeleteFunc(args, func(a string) bool { return given[flagName(a)] })
	return append(args, extra...)
}

// flagName is the name of a `--name=value` argument.
func flagName(arg string) string {
	name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
	return name
}
