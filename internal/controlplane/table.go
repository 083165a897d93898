package controlplane

import (
	"slices"
	"strings"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/component"
	"github.com/kubesim/kubesim/internal/descheduler"
	"github.com/kubesim/kubesim/internal/dpdb"
	"github.com/kubesim/kubesim/internal/karpenter"
	"github.com/kubesim/kubesim/internal/kubeletsim"
	"github.com/kubesim/kubesim/internal/kubeversion"
	"github.com/kubesim/kubesim/internal/kueue"
	"github.com/kubesim/kubesim/internal/usage"
)

// Components is the control plane, in start order: etcd and the upstream
// components (a file each in this package), then one entry for each of
// kubesim's own, declared by the package that owns it. A new component is
// one line here.
func Components() []component.Component {
	return []component.Component{
		etcdComponent(),
		apiServerComponent(),
		controllerManagerComponent(),
		schedulerComponent(),
		kubeletsim.Component(),
		descheduler.Component(),
		dpdb.Component(),
		usage.Component(),
		karpenter.Component(),
		kueue.Component(),
	}
}

// UpstreamComponents are the components built from k8s.io/kubernetes,
// whose flags users may add to (Cluster.extraArgs).
var UpstreamComponents = []string{KubeAPIServer, KubeControllerManager, KubeScheduler}

// EnabledComponents names the components the cluster runs, in start order.
func EnabledComponents(c *v1alpha1.Cluster) []string {
	var names []string
	for _, comp := range Components() {
		if comp.IsEnabled(c) {
			names = append(names, comp.Name)
		}
	}
	return names
}

// Identities are the client identities of the components: each gets a
// certificate and a kubeconfig, so RBAC grants it exactly its role.
func Identities() []component.Identity {
	var ids []component.Identity
	for _, comp := range Components() {
		if comp.Identity != nil {
			ids = append(ids, *comp.Identity)
		}
	}
	return ids
}

// CommandLine is a component's full command line: its arguments, with the
// user's extra arguments laid over them (a flag the user gives replaces
// ours of the same name, as the last one given would win anyway).
func CommandLine(comp component.Component, d clusterdir.Dir, c *v1alpha1.Cluster) []string {
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

// Command is the program and arguments that run comp in cluster c: an
// upstream component of the cluster's Kubernetes version by that
// version's binary (package kubeversion), every other by kubesim's own.
func Command(kubesim string, comp component.Component, d clusterdir.Dir, c *v1alpha1.Cluster) (string, []string, error) {
	args := CommandLine(comp, d, c)
	if !slices.Contains(UpstreamComponents, comp.Name) {
		return kubesim, append([]string{"component", comp.Name}, args...), nil
	}
	v, err := kubeversion.Lookup(c.Kubernetes)
	if err != nil {
		return "", nil, err
	}
	return v.Command(kubesim, comp.Name, args)
}

// flagName is the name of a `--name=value` argument.
func flagName(arg string) string {
	name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
	return name
}
