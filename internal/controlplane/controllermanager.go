package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterclock"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/component"
	"github.com/kubesim/kubesim/internal/credentials"
	"github.com/kubesim/kubesim/internal/version"
)

// KubeControllerManager is upstream's kube-controller-manager, wrapped to
// start beside the API server: its entry, arguments, readiness and main.
const KubeControllerManager = "kube-controller-manager"

// controllerManagerComponent is the controller-manager's entry.
// Like the scheduler's, its process starts with the API server's.
// It waits until kubesim has bootstrapped the API server (with
// patch 0006 not also for upstream's /healthz, which waits for the
// bootstrap hooks' own one-at-a-time writes of the same policy),
// and create waits until its informers have synced (patch 0004):
// a Deployment made the moment create returns gets its pods at once.
func controllerManagerComponent() component.Component {
	return component.Component{
		Name: KubeControllerManager,
		Main: upstreamMain(newControllerManagerCommand),
		Args: controllerManagerArgs, HeldDuringOutages: true, MemoryWeight: 15,
		StartAfter: Etcd, Ready: controllerManagerSynced, Prepare: removeControllerManagerSynced,
		Identity: &controllerManagerIdentity,
		// The EndpointSlice controller's topology hints want every
		// node to have a zone label; simulated nodes have none unless
		// given one, and it says so at each change of Ready nodes.
		Quiet: []*regexp.Regexp{regexp.MustCompile(`"Can't get CPU or zone information for node"`)}}
}

// controllerManagerIdentity is its client: its upstream user, which RBAC's
// bootstrap policy grants exactly its role.
var controllerManagerIdentity = component.Identity{File: "controller-manager", User: "system:kube-controller-manager"}

func controllerManagerArgs(d clusterdir.Dir, c *v1alpha1.Cluster) []string {
	nl := c.NodeLifecycle
	return []string{
		"--kubeconfig=" + d.ComponentKubeconfig(controllerManagerIdentity.File),
		"--bind-address=" + credentials.Loopback,
		"--secure-port=0", // nothing scrapes it; one port fewer to allocate
		"--leader-elect=false",
		"--synced-file=" + controllerManagerSyncedFile(d),
		"--api-server-set-up-file=" + APIServerSetUpFile(d),
		"--pod-controllers-held-file=" + PodControllersHeldFile(d),
		"--use-service-account-credentials=true",
		"--service-account-private-key-file=" + credentials.Path(d, "sa.key"),
		"--root-ca-file=" + credentials.CAFile(d),
		"--cluster-signing-cert-file=" + credentials.CAFile(d),
		"--cluster-signing-key-file=" + credentials.Path(d, credentials.CA+".key"),
		"--allocate-node-cidrs=true",
		"--cluster-cidr=" + c.Networking.PodSubnet,
		"--node-cidr-mask-size=" + strconv.Itoa(c.NodeCIDRMask()),
		"--service-cluster-ip-range=" + c.Networking.ServiceSubnet,
		"--node-monitor-period=" + nl.NodeMonitorPeriod.Duration.String(),
		"--node-monitor-grace-period=" + nl.NodeMonitorGracePeriod.Duration.String(),
		"--node-startup-grace-period=" + nl.NodeStartupGracePeriod.Duration.String(),
		"--horizontal-pod-autoscaler-sync-period=" + c.HorizontalPodAutoscaler.SyncPeriod.Duration.String(),
		"--horizontal-pod-autoscaler-downscale-stabilization=" + c.HorizontalPodAutoscaler.DownscaleStabilization.Duration.String(),
		"--profiling=false",
		// Upstream's 20 QPS paces a ReplicaSet of thousands to a crawl; a
		// simulator's API server has the room.
		"--kube-api-qps=1000",
		"--kube-api-burst=2000",
		// The TTL controller rewrites every node's annotation as the cluster
		// grows, for kubelets' caches that simulated nodes do not have.
		ControllersArg(),
	}
}

const ttlController = "ttl-controller"

// ControllersArg is the controller-manager's --controllers: all but the
// TTL controller and those named.
func ControllersArg(disabled ...string) string {
	return "--controllers=*,-" + strings.Join(append([]string{ttlController}, disabled...), ",-")
}

// PodControllers are the controller-manager's controllers that make and
// delete pods, the Deployment controller that makes ReplicaSets, and the
// claim controller that makes a pod's ResourceClaims from its templates
// (a cloned pod's claim is its own once the clone points the claim at it).
var PodControllers = []string{"deployment-controller", "replicaset-controller", "statefulset-controller",
	"daemonset-controller", "job-controller", "cronjob-controller", "replicationcontroller-controller",
	"resourceclaim-controller"}

// controllerManagerSyncedFile is written by the controller-manager once
// its informers have synced (patch 0004). It is removed before each start.
func controllerManagerSyncedFile(d clusterdir.Dir) string {
	return filepath.Join(d.Path, "controller-manager.synced")
}

// PodControllersHeldFile holds the controller-manager's PodControllers
// while it exists: a clone writes it before its cluster first starts and
// removes it once the objects are loaded, and the controller-manager then
// starts again with them (podcontrollershold.go).
func PodControllersHeldFile(d clusterdir.Dir) string {
	return filepath.Join(d.Path, "pod-controllers.held")
}

// controllerManagerSyncedPatch writes that file; a build without it (a
// `go install`) has nothing to wait for.
const controllerManagerSyncedPatch = "k8s.io/kubernetes/0004-controller-manager-mark-informers-synced.patch"

// controllerManagerSynced is the controller-manager's readiness: its
// informers hold every object there was when it started, so a Deployment
// made now gets its ReplicaSet and pods at once.
func controllerManagerSynced(_ context.Context, d clusterdir.Dir, _ *v1alpha1.Cluster) error {
	if !version.HasPatch(controllerManagerSyncedPatch) {
		return nil
	}
	if _, err := os.Stat(controllerManagerSyncedFile(d)); err != nil {
		return errors.New("kube-controller-manager has not synced its informers yet")
	}
	return nil
}

func removeControllerManagerSynced(d clusterdir.Dir, _ *v1alpha1.Cluster) error {
	if err := os.Remove(controllerManagerSyncedFile(d)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

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
			if waitForFile(c.Context(), setUpFile, clusterclock.Stretch(setUpWait)) {
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
	err := wait.PollUntilContextCancel(ctx, clusterclock.Stretch(setUpPoll), true, func(context.Context) (bool, error) {
		_, err := os.Stat(file)
		return err == nil, nil
	})
	return err == nil
}

// setUpPoll is how often the set-up file is looked for: a stat costs
// nothing, and each look costs create half of it on average.
const setUpPoll = 5 * time.Millisecond
