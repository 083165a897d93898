package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubesim/kubesim/internal/cluster"
	"github.com/kubesim/kubesim/internal/devices"
	"github.com/kubesim/kubesim/internal/kubeletsim"
)

func newNodeCommand() *cobra.Command {
	return group("node", "Fail simulated nodes on purpose, and bring them back",
		newNodeStateCommand("stop", true,
			"Stop the kubelets of nodes: no Lease renewals or status, so the control plane marks them NotReady and evicts their pods",
			"stopped (NotReady once the node-monitor grace period passes; label "+kubeletsim.StoppedLabel+"=true)"),
		newNodeStateCommand("start", false,
			"Start the kubelets of stopped nodes again: they renew their Leases and report Ready",
			"started"),
	)
}

func newNodeStateCommand(verb string, stopped bool, short, done string) *cobra.Command {
	f := &clusterFlags{}
	var withdraw bool
	cmd := &cobra.Command{
		Use:   verb + " NODE...",
		Short: short,
		Args:  cobra.MinimumNArgs(1),
		RunE: f.run(func(cmd *cobra.Command, p *cluster.Provider, nodes []string) error {
			client, err := p.Client(f.name)
			if err != nil {
				return err
			}
			for _, node := range nodes {
				if err := kubeletsim.SetStopped(cmd.Context(), client, node, stopped); err != nil {
					return fmt.Errorf("node %s: %w", verb, err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "node/%s %s\n", node, done)
				switch {
				case stopped && withdraw:
					n, err := devices.Withdraw(cmd.Context(), client, node)
					if err != nil {
						return fmt.Errorf("node %s --withdraw-devices: %w", verb, err)
					}
					fmt.Fprintf(cmd.OutOrStdout(), "node/%s withdrew its devices (%d ResourceSlices deleted)\n", node, n)
				case !stopped:
					// Published anew if withdrawn; as they are, else.
					if err := p.RepublishDevices(cmd.Context(), f.name, node); err != nil {
						return fmt.Errorf("node %s: publishing its devices: %w", verb, err)
					}
				}
			}
			return nil
		}),
	}
	f.add(cmd)
	if stopped {
		cmd.Flags().BoolVar(&withdraw, "withdraw-devices", false, "also delete the nodes' ResourceSlices, as when their DRA drivers stop (by default a dead kubelet's slices stay); node start publishes them again")
	}
	return cmd
}
