package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/component-base/version"

	kubesimversion "github.com/kubesim/kubesim/internal/version"
)

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print kubesim's version and the Kubernetes version it runs",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "kubesim %s (Kubernetes %s)\n", kubesimversion.Version, version.Get().GitVersion)
		},
	}
}
