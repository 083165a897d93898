package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kubesim/kubesim/internal/cluster"
	"github.com/kubesim/kubesim/internal/explain"
)

type explainFlags struct {
	clusterFlags
	namespace string
	node      string
	all       bool
	output    output
}

func (f *explainFlags) add(cmd *cobra.Command) {
	f.clusterFlags.add(cmd)
	f.output.add(cmd)
	cmd.Flags().StringVarP(&f.namespace, "namespace", "n", metav1.NamespaceDefault, "namespace")
}

func newExplainCommand() *cobra.Command {
	return group("explain", "Why the scheduler placed a pod where it did, or left it Pending; why Karpenter keeps a node; why Kueue queues a Job",
		newExplainPodCommand(), newExplainDeploymentCommand(), newExplainNodeCommand(), newExplainWorkloadCommand())
}

func newExplainPodCommand() *cobra.Command {
	f := &explainFlags{}
	cmd := &cobra.Command{
		Use:   "pod NAME",
		Short: "Show the last scheduling attempt of a pod: each node's filter verdict and scores",
		Long: "Shows what kube-scheduler recorded as it last tried to schedule the pod: for each node the\n" +
			"filter verdict (and the plugin that rejected it, and why), for the feasible nodes each score\n" +
			"plugin's score and the total, the chosen node and the runners-up first.\n" +
			"For a Pending pod in a cluster that runs Karpenter, also Karpenter's newest event on it (why it\n" +
			"launched no NodeClaim, or the NodeClaim it nominated) and that NodeClaim's conditions.",
		Example: "  kubesim explain pod web-7d9c-x2x4k\n  kubesim explain pod web-7d9c-x2x4k --node node-000003\n  kubesim explain pod pending-0 -o json",
		Args:    cobra.ExactArgs(1),
		RunE: f.run(func(cmd *cobra.Command, p *cluster.Provider, args []string) error {
			e, err := f.explainPod(cmd.Context(), p, args[0], cmd.OutOrStdout())
			if err != nil {
				return err
			}
			if f.node != "" && e.Result != explain.BoundDirectly {
				if _, ok := e.Find(f.node); !ok {
					return fmt.Errorf("--node: no node %q in the cluster or in the attempt", f.node)
				}
				return f.output.print(cmd.OutOrStdout(), onlyNodes(e, f.node), func(w io.Writer) error { return explain.PrintNode(w, e, f.node) })
			}
			rows := explain.DefaultRows
			if f.all {
				rows = -1
			}
			k, err := karpenter(p, f.name)
			if err != nil {
				return err
			}
			if err := k.AddTo(cmd.Context(), e); err != nil {
				return err
			}
			return f.output.print(cmd.OutOrStdout(), e, func(w io.Writer) error { return explain.PrintPod(w, e, rows) })
		}),
	}
	f.add(cmd)
	cmd.Flags().StringVar(&f.node, "node", "", "explain only why the pod did or did not land on this node")
	cmd.Flags().BoolVar(&f.all, "all", false, "list every node, not only the first ones")
	return cmd
}

// explainPod returns the pod's explanation; when the scheduler holds no
// record of the pod, it prints the pod's scheduling events to out before
// the error, which says they are above.
func (f *explainFlags) explainPod(ctx context.Context, p *cluster.Provider, name string, out io.Writer) (*explain.Explanation, error) {
	client, kube, err := p.Explainer(f.name)
	if err != nil {
		return nil, err
	}
	e, err := explain.Pod(ctx, client, kube, f.name, f.namespace, name)
	var noRecord *explain.NoRecordError
	if errors.As(err, &noRecord) {
		for _, line := range noRecord.Events {
			fmt.Fprintln(out, line)
		}
	}
	return e, err
}

// onlyNodes is the explanation with only the named node and the chosen one.
func onlyNodes(e *explain.Explanation, node string) *explain.Explanation {
	narrowed := *e
	narrowed.Nodes = nil
	for _, n := range e.Nodes {
		if n.Name == node || n.Name == e.Node {
			narrowed.Nodes = append(narrowed.Nodes, n)
		}
	}
	return &narrowed
}

func newExplainDeploymentCommand() *cobra.Command {
	f := &explainFlags{}
	cmd := &cobra.Command{
		Use:     "deployment NAME",
		Short:   "Summarise the last scheduling attempts of a Deployment's pods: which plugins decided",
		Example: "  kubesim explain deployment web",
		Args:    cobra.ExactArgs(1),
		RunE: f.run(func(cmd *cobra.Command, p *cluster.Provider, args []string) error {
			client, kube, err := p.Explainer(f.name)
			if err != nil {
				return err
			}
			explanations, missing, err := explain.Deployment(cmd.Context(), client, kube, f.name, f.namespace, args[0])
			if err != nil {
				return err
			}
			return f.output.print(cmd.OutOrStdout(), explanations, func(w io.Writer) error {
				return explain.PrintWorkload(w, explanations, missing)
			})
		}),
	}
	f.add(cmd)
	return cmd
}

func karpenter(p *cluster.Provider, name string) (*explain.Karpenter, error) {
	cfg, err := p.RESTConfig(name)
	if err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return explain.NewKarpenter(kube, dyn), nil
}

func newExplainNodeCommand() *cobra.Command {
	f := &explainFlags{}
	f.onClusterClock = true // when consolidateAfter elapses is the cluster's time
	cmd := &cobra.Command{
		Use:   "node NAME",
		Short: "Show why Karpenter is or is not consolidating a node, from its own conditions and events",
		Long: "For a node Karpenter made: its NodeClaim and NodePool, instance type and price, the NodeClaim's\n" +
			"Consolidatable condition (or when consolidateAfter elapses), Karpenter's newest disruption events\n" +
			"on the node, its NodeClaim and its NodePool (a PDB that allows no disruption, a\n" +
			"karpenter.sh/do-not-disrupt pod, the budget), and whether it is being disrupted. For any other\n" +
			"node, that no autoscaler manages it, and its state.",
		Example: "  kubesim explain node kwok-default-x2x4k\n  kubesim explain node kwok-default-x2x4k -o yaml",
		Args:    cobra.ExactArgs(1),
		RunE: f.run(func(cmd *cobra.Command, p *cluster.Provider, args []string) error {
			k, err := karpenter(p, f.name)
			if err != nil {
				return err
			}
			x, err := k.Node(cmd.Context(), args[0], time.Now())
			if err != nil {
				return err
			}
			return f.output.print(cmd.OutOrStdout(), x, func(w io.Writer) error { return explain.PrintNodeExplanation(w, x) })
		}),
	}
	f.clusterFlags.add(cmd)
	f.output.add(cmd)
	return cmd
}

func newExplainWorkloadCommand() *cobra.Command {
	f := &explainFlags{}
	f.onClusterClock = true // condition and event times are the cluster's
	cmd := &cobra.Command{
		Use:     "workload NAME",
		Aliases: []string{"job"},
		Short:   "Show what Kueue says of a Workload (or of the Job or pod of that name): admitted, or why it waits",
		Long: "For a Workload of Kueue (given by its name, or by the name of its Job or of one of its pods): its\n" +
			"LocalQueue and ClusterQueue, priority, state and Kueue's reason for it (for a pending Workload, the\n" +
			"message of its QuotaReserved condition: which quota of which flavor is short), the quota its pod sets\n" +
			"were admitted with, its requeues, the Workloads Kueue preempted for it or the one it was preempted for,\n" +
			"Kueue's conditions and Kueue's events on it and its Job. Read from\n" +
			"Kueue's own objects, not recomputed. Needs a cluster made with --addons kueue.",
		Example: "  kubesim explain workload job-train-3f2a1\n  kubesim explain job train -n ml\n  kubesim explain workload train -o json",
		Args:    cobra.ExactArgs(1),
		RunE: f.run(func(cmd *cobra.Command, p *cluster.Provider, args []string) error {
			cfg, err := p.RESTConfig(f.name)
			if err != nil {
				return err
			}
			kube, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			dyn, err := dynamic.NewForConfig(cfg)
			if err != nil {
				return err
			}
			x, err := explain.NewKueue(kube, dyn).Workload(cmd.Context(), f.namespace, args[0])
			if err != nil {
				return err
			}
			return f.output.print(cmd.OutOrStdout(), x, func(w io.Writer) error { return explain.PrintWorkloadExplanation(w, x) })
		}),
	}
	f.add(cmd)
	return cmd
}
