// Package entrypoint runs `kubesim component NAME ARGS`: one process of a
// cluster, by its entry's Main in the table (controlplane.Components), or
// the supervisor, which runs the table and so cannot be in it. Each runs
// alone in a process of its own, because the upstream components keep
// global state — flags, logging, metrics registries, signal handlers —
// that cannot be shared.
package entrypoint

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/kubesim/kubesim/internal/component"
	"github.com/kubesim/kubesim/internal/controlplane"
	"github.com/kubesim/kubesim/internal/supervisor"
	"github.com/kubesim/kubesim/upstream/components"
)

// mains are the processes `kubesim component` runs, by name.
func mains() map[string]func(args []string) int {
	run := map[string]func(args []string) int{supervisor.Name: component.Main(supervisor.Name, func() supervisor.Options { return supervisor.Options{} }, supervisor.Supervise)}
	for _, comp := range controlplane.Components() {
		if comp.Main != nil {
			run[comp.Name] = comp.Main
		}
	}
	return run
}

// Run runs the named component with args and returns its exit code.
func Run(name string, args []string) int {
	run, ok := mains()[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "kubesim component: unknown component %q (one of: %s)\n", name, strings.Join(Names(), ", "))
		return 2
	}
	components.Start(name)
	return run(args)
}

// Names lists the components that can be run.
func Names() []string {
	return slices.Sorted(maps.Keys(mains()))
}
