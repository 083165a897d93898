// Package components holds the entry points of the processes a cluster is
// made of. Each runs alone in a process of its own (`kubesim component
// NAME ARGS`), because the upstream components keep global state — flags,
// logging, metrics registries, signal handlers — that cannot be shared.
// kubesim's own components parse their typed options (component.RunOwn);
// the upstream ones their own flags.
package components

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"

	"github.com/kubesim/kubesim/internal/controlplane"
	"github.com/kubesim/kubesim/internal/membudget"
	"github.com/kubesim/kubesim/internal/residency"
	"github.com/kubesim/kubesim/internal/startprofile"
	"github.com/kubesim/kubesim/internal/supervisor"
)

// startupPagesKept is how long after its start a component keeps the pages
// of the binary its start-up touched.
const startupPagesKept = 20 * time.Second

// upstreamCommands build the cobra command of each upstream component.
var upstreamCommands = map[string]func() *cobra.Command{
	controlplane.KubeAPIServer:         apiserver.NewAPIServerCommand,
	controlplane.KubeControllerManager: newControllerManagerCommand,
	controlplane.KubeScheduler:         newSchedulerCommand,
}

// ownEntryPoints run kubesim's own components and return the exit code:
// etcd, the supervisor, and those whose entries carry their Main.
func ownEntryPoints() map[string]func(args []string) int {
	run := map[string]func(args []string) int{
		controlplane.Etcd: runEtcd,
		supervisor.Name:   runSupervisor,
	}
	for _, comp := range controlplane.Components() {
		if comp.Main != nil {
			run[comp.Name] = comp.Main
		}
	}
	return run
}

// Run runs the named component with args and returns its exit code.
func Run(name string, args []string) int {
	// Start-up is over well within this; what it alone touched of the
	// binary need not stay resident.
	residency.ReleaseAfter(startupPagesKept)
	membudget.FromEnv()
	startprofile.FromEnv(name)
	if newCommand, ok := upstreamCommands[name]; ok {
		// The upstream command parses its flags, sets up logging and
		// signals and runs until terminated.
		cmd := newCommand()
		cmd.SetArgs(args)
		return cli.Run(cmd)
	}
	run, ok := ownEntryPoints()[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "kubesim component: unknown component %q (one of: %s)\n", name, strings.Join(Names(), ", "))
		return 2
	}
	return run(args)
}

// Names lists the components that can be run.
func Names() []string {
	names := slices.Collect(maps.Keys(upstreamCommands))
	names = slices.AppendSeq(names, maps.Keys(ownEntryPoints()))
	slices.Sort(names)
	return names
}
