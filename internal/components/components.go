// Package components holds the entry points of the processes a cluster is
// made of. Each runs alone in a process of its own (`kubesim component
// NAME ARGS`), because the upstream components keep global state — flags,
// logging, metrics registries, signal handlers — that cannot be shared.
package components

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

// entryPoints maps a component name to the function that runs it and
// returns the process's exit code.
var entryPoints = map[string]func(args []string) int{
	"etcd":                    runEtcd,
	"kube-apiserver":          upstream(apiserver.NewAPIServerCommand),
	"kube-controller-manager": upstream(controllermanager.NewControllerManagerCommand),
	"kube-scheduler":          upstream(func() *cobra.Command { return scheduler.NewSchedulerCommand() }),
	"kubelet-sim":             runKubeletSim,
	"descheduler":             runDescheduler,
	"supervisor":              runSupervisor,
}

// Run runs the named component with args and returns its exit code.
func Run(name string, args []string) int {
	run, ok := entryPoints[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "kubesim component: unknown component %q (one of: %s)\n", name, strings.Join(Names(), ", "))
		return 2
	}
	return run(args)
}

// Names lists the components that can be run.
func Names() []string {
	var names []string
	for n := range entryPoints {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// upstream runs an upstream component's own cobra command, which parses
// its flags, sets up logging and signals and runs until terminated.
func upstream(newCommand func() *cobra.Command) func([]string) int {
	return func(args []string) int {
		cmd := newCommand()
		cmd.SetArgs(args)
		return cli.Run(cmd)
	}
}
