package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kubesim/kubesim/internal/cluster"
	"github.com/kubesim/kubesim/internal/descheduler"
)

type deschedulerFlags struct {
	clusterFlags
	profiles    []string
	policy      string
	dryRun      bool
	printPolicy bool
	output      output
}

func newDeschedulerCommand() *cobra.Command {
	f := &deschedulerFlags{}
	f.onClusterClock = true // PodLifeTime and the like read pods' ages
	cmd := &cobra.Command{
		Use:   "deschedule (--profile NAME... | --policy FILE)",
		Short: "Run one descheduling cycle (sigs.k8s.io/descheduler) and print each eviction",
		Long: "Run one cycle of the upstream descheduler against the cluster. Evictions go through the\n" +
			"eviction API, so PodDisruptionBudgets hold; with --dry-run the API server is asked what it\n" +
			"would allow and nothing changes. Profiles: " + strings.Join(descheduler.Profiles, ", ") + ".",
		Args: cobra.NoArgs,
		RunE: f.run(func(cmd *cobra.Command, p *cluster.Provider, _ []string) error {
			policy, err := descheduler.ResolvePolicy(f.policy, f.profiles,
				descheduler.PolicyFields{Policy: "--policy", Profiles: "--profile"})
			if err != nil {
				return err
			}
			if f.printPolicy {
				_, err := cmd.OutOrStdout().Write(policy)
				return err
			}
			cfg, err := p.RESTConfig(f.name)
			if err != nil {
				return err
			}
			// The report is the output; of upstream's log lines only its
			// errors are news.
			descheduler.LogErrors(cmd.ErrOrStderr())
			report, err := descheduler.Run(cmd.Context(), descheduler.Options{Config: cfg, Policy: policy, DryRun: f.dryRun})
			if err != nil {
				return err
			}
			return f.output.print(cmd.OutOrStdout(), report, func(w io.Writer) error { return printReport(w, report) })
		}),
	}
	f.add(cmd)
	fl := cmd.Flags()
	fl.StringSliceVar(&f.profiles, "profile", nil, "named profile(s): "+strings.Join(descheduler.Profiles, ", "))
	fl.StringVar(&f.policy, "policy", "", "a descheduler/v1alpha2 DeschedulerPolicy file")
	fl.BoolVar(&f.dryRun, "dry-run", false, "ask the API server what it would evict (PodDisruptionBudgets included); change nothing")
	fl.BoolVar(&f.printPolicy, "print-policy", false, "print the policy the profiles expand to, and stop")
	f.output.add(cmd)
	return cmd
}

// printReport writes the evictions as a table and a count of each result.
func printReport(w io.Writer, r *descheduler.Report) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "RESULT\tPOD\tNODE\tPLUGIN\tREASON")
	counts := map[descheduler.Result]int{}
	for _, e := range r.Evictions {
		counts[e.Result]++
		reason := e.Reason
		if e.Message != "" {
			reason = e.Message
		}
		if reason == "" {
			reason = "-"
		}
		fmt.Fprintf(tw, "%s\t%s/%s\t%s\t%s\t%s\n", e.Result, e.Namespace, e.Pod, e.Node, e.Plugin, reason)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.DryRun {
		_, err := fmt.Fprintf(w, "dry run: %d would be evicted, %d would be refused; nothing changed\n",
			counts[descheduler.WouldEvict], counts[descheduler.WouldBeRefused])
		return err
	}
	_, err := fmt.Fprintf(w, "%d evicted, %d refused\n", counts[descheduler.Evicted], counts[descheduler.Refused])
	return err
}
