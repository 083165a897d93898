package components

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/cli/globalflag"
	basecompatibility "k8s.io/component-base/compatibility"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/component-base/version/verflag"
	"k8s.io/klog/v2"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"

	"github.com/kubesim/kubesim/internal/explain/recorder"
	"github.com/kubesim/kubesim/internal/labelintern"
)

// newSchedulerCommand is upstream's kube-scheduler command, with the
// explain recorder installed between its Setup and Run — upstream's own
// command runs both at once, leaving no place for it — and its
// --explain-… flags beside upstream's.
func newSchedulerCommand() *cobra.Command {
	opts := options.NewOptions()
	explainOpts := recorder.Options{Pods: recorder.DefaultPods}
	var syncedFile string
	cmd := &cobra.Command{
		Use:  "kube-scheduler",
		Args: cobra.NoArgs,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			return opts.ComponentGlobalsRegistry.Set() // feature gates, before RunE
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runScheduler(cmd, opts, explainOpts, syncedFile)
		},
	}
	nfs := opts.Flags
	verflag.AddFlags(nfs.FlagSet("global"))
	globalflag.AddGlobalFlags(nfs.FlagSet("global"), cmd.Name(), logs.SkipLoggingConfigurationFlags())
	explainOpts.AddFlags(nfs.FlagSet("kubesim"))
	nfs.FlagSet("kubesim").StringVar(&syncedFile, "synced-file", "", "kubesim: wait for the scheduler's grants before starting its informers, and write this file once they and its event handlers have synced")
	for _, f := range nfs.FlagSets {
		cmd.Flags().AddFlagSet(f)
	}
	return cmd
}

// runScheduler does what upstream's runCommand does, recording attempts
// when asked to.
func runScheduler(cmd *cobra.Command, opts *options.Options, explainOpts recorder.Options, syncedFile string) error {
	verflag.PrintAndExitIfRequested()
	if err := explainOpts.Validate(); err != nil {
		return err
	}
	gates := opts.ComponentGlobalsRegistry.FeatureGateFor(basecompatibility.DefaultKubeComponent)
	if err := logsapi.ValidateAndApply(opts.Logs, gates); err != nil {
		return err
	}
	cliflag.PrintFlags(cmd.Flags())

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-server.SetupSignalHandler()
		cancel()
	}()
	cc, sched, err := scheduler.Setup(ctx, opts)
	if err != nil {
		return err
	}
	if err := shareLabelStrings(cc.InformerFactory); err != nil {
		return err
	}
	if explainOpts.Pods > 0 {
		rec := recorder.New(explainOpts.Pods)
		rec.Install(sched)
		if explainOpts.Port != 0 {
			nodes := cc.InformerFactory.Core().V1().Nodes().Lister()
			go func() {
				// Scheduling goes on without the endpoint: it matters more.
				if err := recorder.Serve(ctx, explainOpts, rec, cc.Client, nodes); err != nil {
					klog.ErrorS(err, "Explain endpoint stopped")
				}
			}()
		}
	}
	if syncedFile != "" {
		if err := waitForGrants(ctx, cc.Client); err != nil {
			return err
		}
		go markSynced(ctx, sched, syncedFile)
	}
	return scheduler.Run(ctx, cc, sched)
}

// shareLabelStrings has the scheduler's informers keep one copy of each
// label and selector string (package labelintern), before they start.
// Pods keep upstream's transform, which drops their managedFields. The
// owner kinds and Services are the informers upstream's default spreading
// reads selectors from: a profile without it gets them too, unused.
func shareLabelStrings(f informers.SharedInformerFactory) error {
	strs := labelintern.New()
	pods := func(obj any) (any, error) {
		if accessor, err := meta.Accessor(obj); err == nil && accessor.GetManagedFields() != nil {
			accessor.SetManagedFields(nil)
		}
		return strs.Transform(obj)
	}
	if err := f.Core().V1().Pods().Informer().SetTransform(pods); err != nil {
		return err
	}
	for _, i := range []cache.SharedIndexInformer{
		f.Core().V1().Services().Informer(),
		f.Core().V1().ReplicationControllers().Informer(),
		f.Apps().V1().ReplicaSets().Informer(),
		f.Apps().V1().StatefulSets().Informer(),
	} {
		if err := i.SetTransform(strs.Transform); err != nil {
			return err
		}
	}
	return nil
}
