// Command kubesim runs simulated Kubernetes clusters: a real control plane
// with simulated kubelets, all from this one binary.
package main

import (
	"os"

	"github.com/kubesim/kubesim/internal/cli"
	"github.com/kubesim/kubesim/internal/entrypoint"
	"github.com/kubesim/kubesim/internal/kubectltext" // its init: components skip kubectl's translations
)

func main() {
	// `kubesim component NAME ARGS` is how the supervisor re-executes this
	// binary as one control-plane process; it bypasses the CLI entirely so
	// each upstream component parses its own flags.
	if kubectltext.IsComponent(os.Args) {
		os.Exit(entrypoint.Run(os.Args[2], os.Args[3:]))
	}
	os.Exit(cli.Main(os.Args[1:]))
}
