package components

import (
	"context"
	"os"
	"time"

	"github.com/spf13/cobra"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
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
	schedulerpkg "k8s.io/kubernetes/pkg/scheduler"

	"github.com/kubesim/kubesim/upstream/clock"
	"github.com/kubesim/kubesim/upstream/labelintern"
	"github.com/kubesim/kubesim/upstream/recorder"
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

// The scheduler's process starts beside the API server, so that its
// start-up is done by the time the cluster's bootstrap is; these are the
// two ends of that early start.

// grantPoll is how often the scheduler asks whether it may start: as often
// as the supervisor asks readiness.
const grantPoll = 25 * time.Millisecond

// waitForGrants returns once the scheduler may list what it watches: its
// two upstream roles (system:kube-scheduler, system:volume-scheduler) are
// bound. An informer refused before that would back off for a second or
// more, and the scheduler sync that much later.
func waitForGrants(ctx context.Context, client kubernetes.Interface) error {
	checks := []authorizationv1.ResourceAttributes{
		{Verb: "list", Resource: "pods"},
		{Verb: "list", Group: "storage.k8s.io", Resource: "storageclasses"},
	}
	// Waits for real work: as long in real time on a scaled clock.
	return wait.PollUntilContextCancel(ctx, clock.Stretch(grantPoll), true, func(ctx context.Context) (bool, error) {
		for _, attrs := range checks {
			review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &attrs}}
			ctx, cancel := context.WithTimeout(ctx, clock.Stretch(time.Second))
			got, err := client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
			cancel()
			if err != nil || !got.Status.Allowed {
				return false, nil // not serving, or not bootstrapped yet
			}
		}
		return true, nil
	})
}

// markSynced writes file once the scheduler's informers have synced and
// its event handlers have seen their initial lists: upstream's
// sched-handler-sync readiness, which the supervisor reads from the file.
func markSynced(ctx context.Context, sched *schedulerpkg.Scheduler, file string) {
	if err := sched.WaitForHandlersSync(ctx); err != nil {
		return // stopped first
	}
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		klog.ErrorS(err, "Cannot mark the scheduler synced", "file", file)
	}
}
