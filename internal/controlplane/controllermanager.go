package controlplane

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/component"
	"github.com/kubesim/kubesim/internal/credentials"
	"github.com/kubesim/kubesim/internal/version"
	"github.com/kubesim/kubesim/upstream/components"
)

// KubeControllerManager is upstream's kube-controller-manager, wrapped to
// start beside the API server: its entry, arguments, readiness and main.
const KubeControllerManager = components.KubeControllerManager

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
		Main: components.Mains()[KubeControllerManager],
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
func controllerManagerSynced(_ context.Context, d clusterdir.Dir, c *v1alpha1.Cluster) error {
	if !version.HasPatch(controllerManagerSyncedPatch) || !OwnVersion(c) {
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
