package components

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"

	"github.com/kubesim/kubesim/upstream/clock"
)

// PodControllers are the controller-manager's controllers that make and
// delete pods, the Deployment controller that makes ReplicaSets, and the
// claim controller that makes a pod's ResourceClaims from its templates
// (a cloned pod's claim is its own once the clone points the claim at it).
var PodControllers = []string{"deployment-controller", "replicaset-controller", "statefulset-controller",
	"daemonset-controller", "job-controller", "cronjob-controller", "replicationcontroller-controller",
	"resourceclaim-controller"}

// setUpWait bounds the controller-manager's own wait for kubesim to set
// the API server up; past it upstream's wait takes over.
const setUpWait = 10 * time.Second

// newControllerManagerCommand is upstream's controller-manager, which
// first waits for the API server's /healthz, polling it each second. Its
// process starts with the API server's, whose post-start hooks hold
// /healthz back while they write the default RBAC policy one object at a
// time; kubesim writes the same policy, many at a time, as it sets the API
// server up. So kubesim waits here until it has (--api-server-set-up-file)
// and, with patch 0006, has upstream ask the readiness kubesim itself asks
// (APIServerReadyPath) instead of /healthz: the controllers
// are built ~0.1 s sooner. Without the patch upstream asks /healthz.
//
// --synced-file names the file the controller-manager writes once its
// informers have synced (patch 0004 reads it from the environment; a
// build without the patch writes nothing). --pod-controllers-held-file
// holds the pod controllers while the file exists (podcontrollershold.go).
func newControllerManagerCommand() *cobra.Command {
	cmd := controllermanager.NewControllerManagerCommand()
	var syncedFile, heldFile, setUpFile string
	cmd.Flags().StringVar(&syncedFile, "synced-file", "", "kubesim: write this file once the controller-manager's informers have synced")
	cmd.Flags().StringVar(&setUpFile, "api-server-set-up-file", "", "kubesim: wait for this file, then for the API server's readiness without its bootstrap hooks instead of /healthz")
	cmd.Flags().StringVar(&heldFile, "pod-controllers-held-file", "", "kubesim: while this file exists, run without the controllers that make pods; once it is gone, start again with them")
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if syncedFile != "" {
			if err := os.Setenv(ControllerManagerSyncedFileEnv, syncedFile); err != nil {
				return err
			}
		}
		held, err := holdPodControllers(c.Flags(), heldFile, PodControllers)
		if err != nil {
			return fmt.Errorf("--pod-controllers-held-file: %w", err)
		}
		if held {
			klog.InfoS("running without the pod controllers until the file is gone", "file", heldFile, "controllers", PodControllers)
			go func() {
				waitUntilGone(heldFile)
				klog.InfoS("the pod controllers' hold is lifted: starting again with them", "file", heldFile)
				if syncedFile != "" {
					_ = os.Remove(syncedFile) // the next run writes it once synced
				}
				execAgain()
			}()
		}
		// Only once the API server is set up may upstream skip /healthz:
		// the RBAC policy its controllers run under is there then.
		if setUpFile != "" {
			if waitForFile(c.Context(), setUpFile, clock.Stretch(setUpWait)) {
				if err := os.Setenv(ControllerManagerReadyPathEnv, APIServerReadyPath()); err != nil {
					return err
				}
			} else {
				klog.InfoS("The API server is not set up yet: waiting for its /healthz instead", "file", setUpFile)
			}
		}
		return run(c, args)
	}
	return cmd
}

// ControllerManagerSyncedFileEnv is the variable patch 0004 reads.
const ControllerManagerSyncedFileEnv = "KUBESIM_CONTROLLER_MANAGER_SYNCED_FILE"

// ControllerManagerReadyPathEnv is the variable patch 0006 reads.
const ControllerManagerReadyPathEnv = "KUBESIM_CONTROLLER_MANAGER_READY_PATH"

// waitForFile says whether file exists within timeout (a wait for the API
// server's work: the caller stretches it on a scaled clock).
func waitForFile(ctx context.Context, file string, timeout time.Duration) bool {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, clock.Stretch(setUpPoll), true, func(context.Context) (bool, error) {
		_, err := os.Stat(file)
		return err == nil, nil
	})
	return err == nil
}

// setUpPoll is how often the set-up file is looked for: a stat costs
// nothing, and each look costs create half of it on average.
const setUpPoll = 5 * time.Millisecond
