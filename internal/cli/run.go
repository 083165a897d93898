package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/kubesim/kubesim/internal/cluster"
	"github.com/kubesim/kubesim/internal/scenario"
)

func newRunCommand() *cobra.Command {
	var o scenario.Options
	var set []string
	var kubeconfig string
	var withUI bool
	cmd := &cobra.Command{
		Use:   "run SCENARIO...",
		Short: "Run scenario files: make a cluster, run the steps, check the assertions, report",
		Long: "Run kubesim.io/v1alpha1 Scenario files in turn, each on a fresh cluster deleted after it\n" +
			"(--keep leaves it; --cluster runs on an existing one). Exits 0 only if every step and\n" +
			"assertion passed. Each step is bounded by its timeout; --timeout bounds the whole run.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, files []string) error {
			if o.Timeout < 0 {
				return fmt.Errorf("--timeout %s: must be a positive duration such as 30m", o.Timeout)
			}
			o.Set = map[string]string{}
			for _, kv := range set {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return fmt.Errorf("--set %q: want name=value", kv)
				}
				o.Set[k] = v
			}
			p, err := cluster.NewProvider(kubeconfig, io.Discard)
			if err != nil {
				return err
			}
			o.Provider, o.Out, o.Terminal = p, cmd.OutOrStdout(), isTerminal(cmd.OutOrStdout())
			o.Kubeconfig = kubeconfig
			// The summary is the output; upstream's log lines would be noise.
			klog.SetOutput(io.Discard)
			klog.LogToStderr(false)
			quietErrors()
			var page *runUI
			if withUI {
				page = &runUI{ctx: cmd.Context(), p: p, out: cmd.OutOrStdout()}
				o.Live = page.live
				if o.Report == "" {
					// The page links the report: written where only this
					// user reads it.
					f, err := os.CreateTemp("", "kubesim-report-*.html")
					if err != nil {
						return err
					}
					f.Close()
					o.Report = f.Name()
				}
			}
			_, err = scenario.Run(cmd.Context(), files, o)
			if page != nil && page.view != nil {
				page.view.Finished(err, o.Report)
				fmt.Fprintf(cmd.OutOrStdout(), "The run is over; its page, and its report (%s), stay at %s until Ctrl-C\n", o.Report, page.view.URL)
				<-cmd.Context().Done()
			}
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Cluster, "cluster", "", "run on this existing cluster instead of making one")
	fl.BoolVar(&o.Keep, "keep", false, "leave the clusters the run made")
	fl.StringArrayVar(&set, "set", nil, "override a parameter: name=value (repeatable)")
	fl.StringVar(&o.JUnit, "junit", "", "write JUnit XML here (a test case per assertion)")
	fl.StringVar(&o.Report, "report", "", "write a self-contained HTML report here")
	fl.BoolVar(&withUI, "ui", false, "serve a live page of the run (steps, assertions, each cluster's own page) and, once it is over, its HTML report, until Ctrl-C")
	fl.DurationVar(&o.Timeout, "timeout", 0, "bound the whole run, e.g. 30m: the step then running fails, the rest are not run, clusters are deleted (default: no bound; each step has its own timeout)")
	fl.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig the clusters' contexts are written to (default $KUBECONFIG or ~/.kube/config)")
	// A run of scenarios on several clocks runs each clock's in a `kubesim
	// run` of its own, which hands its results back in this file.
	fl.StringVar(&o.ResultsTo, "results-to", "", "")
	_ = fl.MarkHidden("results-to")
	return cmd
}

// quietErrors keeps klog's error lines (the descheduler's Event broadcaster
// complaining as its cycle ends) off stderr, which klog writes them to
// whatever its output.
func quietErrors() {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("stderrthreshold", "FATAL")
}
