// Package components runs the upstream components of a Kubernetes release
// — kube-apiserver, kube-controller-manager, kube-scheduler — as kubesim
// runs them: upstream's commands, with kubesim's few flags beside theirs
// (the explain recorder, the files that tell the supervisor they have
// synced). It imports nothing of kubesim but this module's leaves, so that
// every Kubernetes version kubesim offers builds it against its own
// release (versions/README.md); kubesim's own binary builds it against
// the release kubesim is built on.
package components

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"

	"github.com/kubesim/kubesim/upstream/membudget"
	"github.com/kubesim/kubesim/upstream/residency"
	"github.com/kubesim/kubesim/upstream/startprofile"
)

// The components' names, as the supervisor runs them.
const (
	KubeAPIServer         = "kube-apiserver"
	KubeControllerManager = "kube-controller-manager"
	KubeScheduler         = "kube-scheduler"
)

// Mains are the components' mains, by name: each returns its exit code.
func Mains() map[string]func(args []string) int {
	return map[string]func(args []string) int{
		KubeAPIServer:         upstreamMain(apiserver.NewAPIServerCommand),
		KubeControllerManager: upstreamMain(newControllerManagerCommand),
		KubeScheduler:         upstreamMain(newSchedulerCommand),
	}
}

// Names are the components' names, sorted.
func Names() []string { return slices.Sorted(maps.Keys(Mains())) }

// upstreamMain is the Main of an upstream component: its own cobra
// command parses its flags, sets up logging and signals, and runs until
// terminated.
func upstreamMain(newCommand func() *cobra.Command) func(args []string) int {
	return func(args []string) int {
		cmd := newCommand()
		cmd.SetArgs(args)
		return cli.Run(cmd)
	}
}

// startupPagesKept is how long after its start a component keeps the pages
// of the binary its start-up touched.
const startupPagesKept = 20 * time.Second

// Start is what every component's process does before its main: it lets
// the pages only its start-up touched go after a while, takes its memory
// budget and, when asked, profiles its start (their packages say how).
func Start(name string) {
	// Start-up is over well within this; what it alone touched of the
	// binary need not stay resident.
	residency.ReleaseAfter(startupPagesKept)
	membudget.FromEnv()
	startprofile.FromEnv(name)
}

// Main is a Kubernetes version's binary (versions/): `NAME ARGS` runs the
// component NAME, as `kubesim component NAME ARGS` runs kubesim's own
// version's.
func Main() {
	run, ok := Mains()[firstArg()]
	if !ok {
		fmt.Fprintf(os.Stderr, "usage: %s COMPONENT [FLAGS] (COMPONENT one of: %s)\n", filepath.Base(os.Args[0]), strings.Join(Names(), ", "))
		os.Exit(2)
	}
	Start(os.Args[1])
	os.Exit(run(os.Args[2:]))
}

func firstArg() string {
	if len(os.Args) < 2 {
		return ""
	}
	return os.Args[1]
}
