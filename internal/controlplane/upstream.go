package controlplane

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/component"
	"github.com/kubesim/kubesim/internal/credentials"
	"github.com/kubesim/kubesim/internal/explain/recorder"
)

// The upstream components and etcd: their entries and command lines,
// derived from the cluster's config.

// upstreamComponents are etcd and the components built from
// k8s.io/kubernetes, in start order; internal/components runs them.
func upstreamComponents() []component.Component {
	return []component.Component{
		{Name: Etcd, Args: component.OwnArgs(etcdOptions), Ready: etcdReady, PortsPrivate: true, Barrier: true,
			Ports:        []string{"", etcdPeerPort},
			MemoryWeight: 10,
			// Upstream's default: etcd's live heap is a few tens of MB and
			// collecting it is cheap (5 % of its CPU at 10,000 pods), so the
			// room GOGC=400 would grow its heap to is memory spent for
			// little CPU saved (measured: 50 MiB less RSS after the
			// side-by-side run, for 1–2 CPU-s more of etcd's).
			GCPercent: "100"},
		{Name: KubeAPIServer, Args: apiServerArgs, Ready: apiServerServing, Setup: bootstrapThenReady, Prepare: writeAPIServerFiles, Barrier: true,
			Ports:        []string{""},
			ClientCerts:  []component.Identity{apiServerWebhookClient},
			MemoryWeight: 45,
			// As it starts, the API server closes etcd clients it made
			// for a while (probes, each resource's storage) while gRPC
			// still dials them: not etcd failing, which says otherwise
			// (connection refused, no such file).
			Quiet: []*regexp.Regexp{regexp.MustCompile(`grpc: addrConn\.createTransport failed to connect to .*(use of closed network connection|operation was canceled)`)}},
		// Like the scheduler's, its process starts with the API server's.
		// It waits until kubesim has bootstrapped the API server (with
		// patch 0006 not also for upstream's /healthz, which waits for the
		// bootstrap hooks' own one-at-a-time writes of the same policy),
		// and create waits until its informers have synced (patch 0004):
		// a Deployment made the moment create returns gets its pods at once.
		{Name: KubeControllerManager, Args: controllerManagerArgs, HeldDuringOutages: true, MemoryWeight: 15,
			StartAfter: Etcd, Ready: controllerManagerSynced, Prepare: removeControllerManagerSynced,
			Identity: &controllerManagerIdentity,
			// The EndpointSlice controller's topology hints want every
			// node to have a zone label; simulated nodes have none unless
			// given one, and it says so at each change of Ready nodes.
			Quiet: []*regexp.Regexp{regexp.MustCompile(`"Can't get CPU or zone information for node"`)}},
		// Its process starts with the API server's, and waits there until
		// its grants exist (bootstrap writes them); create waits until it
		// has synced, so a pod made the moment create returns is scheduled
		// at once, and the process's start-up costs create nothing.
		{Name: KubeScheduler, Args: schedulerArgs, Prepare: writeSchedulerConfig,
			StartAfter: Etcd, Ready: schedulerSynced,
			ServingCerts: []component.ServingCert{recorder.ServingCert},
			Ports:        []string{recorder.PortName},
			MemoryWeight: 15,
			Identity:     &schedulerIdentity},
	}
}

// The upstream components' clients: each its upstream user, which RBAC's
// bootstrap policy grants exactly its role.
var (
	controllerManagerIdentity = component.Identity{File: "controller-manager", User: "system:kube-controller-manager"}
	schedulerIdentity         = component.Identity{File: "scheduler", User: "system:kube-scheduler"}
)

// apiServerWebhookClient is the certificate the API server presents to
// webhooks (admissionConfigFile): kubesim's own accept no other caller.
var apiServerWebhookClient = component.Identity{File: "apiserver-webhook-client", User: credentials.APIServerWebhookClientUser}

func etcdOptions(d clusterdir.Dir, c *v1alpha1.Cluster) *EtcdOptions {
	return &EtcdOptions{
		DataDir:       d.Etcd(),
		ClientURL:     EtcdURL(c),
		ClientSocket:  EtcdSocket(d),
		PeerURL:       EtcdPeerURL(c),
		CertFile:      credentials.Path(d, credentials.EtcdServer+".crt"),
		KeyFile:       credentials.Path(d, credentials.EtcdServer+".key"),
		TrustedCAFile: credentials.EtcdCAFile(d),
	}
}

func apiServerArgs(d clusterdir.Dir, c *v1alpha1.Cluster) []string {
	return []string{
		"--bind-address=" + credentials.Loopback,
		"--secure-port=" + strconv.Itoa(c.Status.Ports.APIServer()),
		// Over etcd's unix socket, without TLS: every write, and every
		// event of every watch, would otherwise be encrypted and decrypted
		// twice on the same machine, and each of the API server's ~70
		// storage clients would make a TLS handshake at start.
		"--etcd-servers=unix://" + EtcdSocket(d),
		"--client-ca-file=" + credentials.CAFile(d),
		"--tls-cert-file=" + credentials.Path(d, credentials.APIServer+".crt"),
		"--tls-private-key-file=" + credentials.Path(d, credentials.APIServer+".key"),
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction",
		"--admission-control-config-file=" + admissionConfigFile(d),
		"--default-not-ready-toleration-seconds=" + tolerationSeconds(c),
		"--default-unreachable-toleration-seconds=" + tolerationSeconds(c),
		"--service-account-issuer=https://" + credentials.KubernetesServiceDomain,
		"--service-account-key-file=" + credentials.Path(d, "sa.pub"),
		"--service-account-signing-key-file=" + credentials.Path(d, "sa.key"),
		"--service-cluster-ip-range=" + c.Networking.ServiceSubnet,
		"--allow-privileged=true",
		"--audit-policy-file=" + d.AuditPolicy(),
		"--audit-log-path=" + d.Log(AuditLog),
		"--audit-log-maxsize=100",
		"--audit-log-maxbackup=3",
		// Batched: events are written by a background worker, not one
		// write per request on the request's path.
		"--audit-log-mode=batch",
		"--egress-selector-config-file=" + egressConfigFile(d),
		// The aggregation layer (metrics.k8s.io, served by usage-metrics):
		// the API server proxies to an aggregated API with the client
		// certificate it presents to kubesim's webhooks, asserting the
		// user in headers that the aggregated server trusts from it alone.
		"--requestheader-client-ca-file=" + credentials.CAFile(d),
		"--requestheader-allowed-names=" + credentials.APIServerWebhookClientUser,
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + credentials.Path(d, apiServerWebhookClient.File+".crt"),
		"--proxy-client-key-file=" + credentials.Path(d, apiServerWebhookClient.File+".key"),
		// Nodes are reached by address, through the egress proxy, which
		// connects their kubelet port to usage-metrics (KWOK's Metric
		// paths) or refuses it: never by name, which the host's DNS would
		// be asked. The API server presents the same client certificate
		// to kubelets as to webhooks and aggregated APIs; it does not
		// verify a kubelet's (no --kubelet-certificate-authority): a
		// simulated node's address is no name a certificate could carry.
		"--kubelet-preferred-address-types=InternalIP",
		"--kubelet-client-certificate=" + credentials.Path(d, apiServerWebhookClient.File+".crt"),
		"--kubelet-client-key=" + credentials.Path(d, apiServerWebhookClient.File+".key"),
		// Pods are read and watched from etcd, not from a watch cache. The
		// cache holds every pod and, for the last 75 s of writes, each
		// version a write replaced: at 10,000 pods 1.5 of the API server's
		// 2.4 GB. Without it pod writes cost a few percent more CPU (a read
		// from etcd per update, a decode per watcher); what a list or watch
		// returns is the same. extraArgs kube-apiserver
		// --watch-cache-sizes= brings it back.
		"--watch-cache-sizes=pods#0",
	}
}

func tolerationSeconds(c *v1alpha1.Cluster) string {
	return strconv.Itoa(int(c.NodeLifecycle.PodEvictionToleration.Duration / time.Second))
}

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

func schedulerArgs(d clusterdir.Dir, c *v1alpha1.Cluster) []string {
	args := []string{
		"--config=" + schedulerConfigFile(d),
		"--bind-address=" + credentials.Loopback,
		"--secure-port=0",
		"--synced-file=" + schedulerSyncedFile(d),
	}
	return append(args, recorder.SchedulerArgs(d, c)...)
}
