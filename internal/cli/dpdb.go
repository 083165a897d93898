package cli

import (
	"github.com/spf13/cobra"

	"github.com/kubesim/kubesim/internal/dpdb"
)

// newDPDBControllerCommand runs the DistributedPodDisruptionBudget
// controller against any cluster (deploy/dpdb runs it in-cluster).
func newDPDBControllerCommand() *cobra.Command {
	opts := dpdb.DefaultOptions()
	cmd := &cobra.Command{
		Use:   "dpdb-controller --cluster-name NAME [--kubeconfig FILE]",
		Short: "Run the DistributedPodDisruptionBudget controller against any cluster",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return dpdb.Run(cmd.Context(), opts)
		},
	}
	opts.AddFlags(cmd.Flags())
	return cmd
}
