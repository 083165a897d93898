package cli

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubesim/kubesim/internal/cluster"
	"github.com/kubesim/kubesim/internal/clusterclock"
	"github.com/kubesim/kubesim/internal/kueuefit"
	"github.com/kubesim/kubesim/internal/manifest"
)

func newKueueCommand() *cobra.Command {
	return group("kueue", "Ask Kueue about a Job before submitting it", newKueueSimulateCommand())
}

func newKueueSimulateCommand() *cobra.Command {
	f := &explainFlags{}
	f.onClusterClock = true // the copy runs on the cluster's clock, and so do its times
	var file string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "simulate -f JOB.yaml",
		Short: "Would Kueue admit this Job now? Kueue's answer, from a copy of the cluster: the cluster is not touched",
		Long: "Submits the Job into a throwaway copy of the cluster (its objects as they are now, on its clock,\n" +
			"with its Kueue) and reports what Kueue does with it there: admitted, pending with Kueue's reason,\n" +
			"or admitted once the workloads it preempts (named, with Kueue's reason) are gone. The copy is then\n" +
			"deleted; nothing is written to the cluster. Needs a cluster made with --addons kueue.",
		Example: "  kubesim kueue simulate -f train.yaml\n  kubesim kueue simulate -f train.yaml -n ml -o json",
		Args:    cobra.NoArgs,
		RunE: f.run(func(cmd *cobra.Command, p *cluster.Provider, _ []string) error {
			if file == "" {
				return errors.New("--filename (-f): give the Job's manifest")
			}
			objs, err := manifest.ReadObjects(file)
			if err != nil {
				return err
			}
			job, err := kueuefit.Job(objs, f.namespace)
			if err != nil {
				return manifest.InFile(file, err)
			}
			// The copy's start and Kueue's work take real time.
			ctx, cancel := context.WithTimeout(cmd.Context(), clusterclock.Stretch(timeout))
			defer cancel()
			a, err := kueuefit.Simulate(ctx, p, f.name, job)
			if err != nil {
				return err
			}
			return f.output.print(cmd.OutOrStdout(), a, func(w io.Writer) error { return kueuefit.Print(w, a, f.name) })
		}),
	}
	f.add(cmd)
	cmd.Flags().StringVarP(&file, "filename", "f", "", "the Job's manifest (one batch/v1 Job labelled kueue.x-k8s.io/queue-name)")
	cmd.Flags().DurationVar(&timeout, "timeout", 3*time.Minute, "how long to wait for the copy and Kueue's decision")
	return cmd
}
