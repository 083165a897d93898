package components

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/kubesim/kubesim/internal/clusterclock"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"

	"github.com/kubesim/kubesim/internal/controlplane"
)

// healthzWait bounds the controller-manager's own wait for the API
// server's /healthz; past it upstream's wait takes over.
const healthzWait = 10 * time.Second

// newControllerManagerCommand is upstream's controller-manager, which
// first waits for the API server's /healthz — polling it each second. The
// controller-manager starts with the API server, whose post-start hooks
// hold /healthz back (rbac/bootstrap-roles and the system PriorityClasses'
// hook sleep a second before they look, unless patch 0005 is applied):
// upstream's first look fails and its controllers start a second late.
// kubesim looks every grantPoll first, so upstream's first look succeeds.
//
// --synced-file names the file the controller-manager writes once its
// informers have synced (patch 0004 reads it from the environment; a
// build without the patch writes nothing). --pod-controllers-held-file
// holds the pod controllers while the file exists (podcontrollershold.go).
func newControllerManagerCommand() *cobra.Command {
	cmd := controllermanager.NewControllerManagerCommand()
	var syncedFile, heldFile string
	cmd.Flags().StringVar(&syncedFile, "synced-file", "", "kubesim: write this file once the controller-manager's informers have synced")
	cmd.Flags().StringVar(&heldFile, "pod-controllers-held-file", "", "kubesim: while this file exists, run without the controllers that make pods; once it is gone, start again with them")
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if syncedFile != "" {
			if err := os.Setenv(ControllerManagerSyncedFileEnv, syncedFile); err != nil {
				return err
			}
		}
		held, err := holdPodControllers(c.Flags(), heldFile, controlplane.PodControllers)
		if err != nil {
			return fmt.Errorf("--pod-controllers-held-file: %w", err)
		}
		if held {
			klog.InfoS("running without the pod controllers until the file is gone", "file", heldFile, "controllers", controlplane.PodControllers)
			go func() {
				waitUntilGone(heldFile)
				klog.InfoS("the pod controllers' hold is lifted: starting again with them", "file", heldFile)
				if syncedFile != "" {
					_ = os.Remove(syncedFile) // the next run writes it once synced
				}
				execAgain()
			}()
		}
		if f := c.Flags().Lookup("kubeconfig"); f != nil && f.Value.String() != "" {
			waitForHealthz(c.Context(), f.Value.String())
		}
		return run(c, args)
	}
	return cmd
}

// ControllerManagerSyncedFileEnv is the variable patch 0004 reads.
const ControllerManagerSyncedFileEnv = "KUBESIM_CONTROLLER_MANAGER_SYNCED_FILE"

// waitForHealthz returns once the API server's /healthz is OK, or after
// healthzWait, or at once if the kubeconfig cannot be read (upstream
// will say why).
func waitForHealthz(ctx context.Context, kubeconfig string) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return
	}
	if ctx == nil {
		ctx = context.Background()
	}
	// A wait for the API server's work: as long in real time on a scaled
	// clock.
	ctx, cancel := context.WithTimeout(ctx, clusterclock.Stretch(healthzWait))
	defer cancel()
	_ = wait.PollUntilContextCancel(ctx, clusterclock.Stretch(grantPoll), true, func(ctx context.Context) (bool, error) {
		status := 0
		client.Discovery().RESTClient().Get().AbsPath("/healthz").Do(ctx).StatusCode(&status)
		return status == http.StatusOK, nil
	})
}
