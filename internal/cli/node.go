package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"github.com/kubesim/kubesim/internal/cluster"
	"github.com/kubesim/kubesim/internal/devices"
	"github.com/kubesim/kubesim/internal/kubeletsim"
)

func newNodeCommand() *cobra.Command {
	return group("node", "Fail simulated nodes on purpose, and bring them back",
		newNodeStateCommand("stop", true,
			"Stop the kubelets of nodes: no Lease renewals or status, so the control plane marks them NotReady and evicts their pods"),
		newNodeStateCommand("start", false,
			"Start the kubelets of stopped nodes again: they renew their Leases and report Ready"),
	)
}

func newNodeStateCommand(verb string, stopped bool, short string) *cobra.Command {
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
				if err := setNodeState(cmd.Context(), p, f.name, client, node, stopped, withdraw, cmd.OutOrStdout()); err != nil {
					return err
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

// setNodeState is `kubesim node stop` (stopped) or `node start` of one
// node, saying what it did on out.
func setNodeState(ctx context.Context, p *cluster.Provider, name string, client kubernetes.Interface, node string, stopped, withdraw bool, out io.Writer) error {
	verb, done := "start", "started"
	if stopped {
		verb, done = "stop", "stopped (NotReady once the node-monitor grace period passes; label "+kubeletsim.StoppedLabel+"=true)"
	}
	if err := kubeletsim.SetStopped(ctx, client, node, stopped); err != nil {
		return fmt.Errorf("node %s: %w", verb, err)
	}
	fmt.Fprintf(out, "node/%s %s\n", node, done)
	switch {
	case stopped && withdraw:
		n, err := devices.Withdraw(ctx, client, node)
		if err != nil {
			return fmt.Errorf("node %s --withdraw-devices: %w", verb, err)
		}
		fmt.Fprintf(out, "node/%s withdrew its devices (%d ResourceSlices deleted)\n", node, n)
	case !stopped:
		// Published anew if withdrawn; as they are, else.
		if err := p.RepublishDevices(ctx, name, node); err != nil {
			return fmt.Errorf("node %s: publishing its devices: %w", verb, err)
		}
	}
	return nil
}
