package controlplane

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
)

// Names of the components, as `kubesim component NAME` runs them and as
// their logs are called.
const (
	Etcd                  = "etcd"
	KubeAPIServer         = "kube-apiserver"
	KubeControllerManager = "kube-controller-manager"
	KubeScheduler         = "kube-scheduler"
	KubeletSim            = "kubelet-sim"
	Descheduler           = "descheduler"
)

// Component is one process of the control plane.
type Component struct {
	Name string
	// Args are the arguments after `kubesim component NAME`, derived from
	// the cluster config each time the component (re)starts.
	Args func(d clusterdir.Dir, c *v1alpha1.Cluster) []string
	// Ready, if set, must succeed before the next component starts.
	Ready func(ctx context.Context, d clusterdir.Dir, c *v1alpha1.Cluster) error
	// Setup, if set, runs once the component is ready, before the next
	// starts; it is retried until it succeeds.
	Setup func(ctx context.Context, d clusterdir.Dir, c *v1alpha1.Cluster) error
	// Prepare, if set, writes what the component reads (a config file)
	// before each start.
	Prepare func(d clusterdir.Dir, c *v1alpha1.Cluster) error
	// Ports returns pointers to the config's ports this component binds,
	// so the supervisor can move them if another process took one.
	Ports func(c *v1alpha1.Cluster) []*int
}

// Components is the control plane, in start order.
func Components() []Component {
	return []Component{
		{Name: Etcd, Args: etcdArgs, Ready: etcdReady,
			Ports: func(c *v1alpha1.Cluster) []*int { return []*int{&c.Status.Ports.Etcd, &c.Status.Ports.EtcdPeer} }},
		{Name: KubeAPIServer, Args: apiServerArgs, Ready: APIServerReady, Setup: bootstrap,
			Ports: func(c *v1alpha1.Cluster) []*int { return []*int{&c.Status.Ports.APIServer} }},
		{Name: KubeControllerManager, Args: controllerManagerArgs},
		{Name: KubeScheduler, Args: schedulerArgs, Prepare: writeSchedulerConfig},
		{Name: KubeletSim, Args: kubeletSimArgs},
		{Name: Descheduler, Args: deschedulerArgs},
	}
}

// Enabled reports whether the cluster runs the component: the simulator
// unless disabled, the descheduler if configured, all others always.
func (comp Component) Enabled(c *v1alpha1.Cluster) bool {
	switch comp.Name {
	case KubeletSim:
		return !c.DisableKubeletSim
	case Descheduler:
		return c.Descheduler.Enabled()
	}
	return true
}

// ComponentNames lists the components, for help texts and `logs`.
func ComponentNames() []string {
	var names []string
	for _, c := range Components() {
		names = append(names, c.Name)
	}
	return names
}

func pkiPath(d clusterdir.Dir, file string) string { return filepath.Join(d.PKI(), file) }

// EtcdURL is where the cluster's etcd serves clients.
func EtcdURL(c *v1alpha1.Cluster) string {
	return fmt.Sprintf("https://%s:%d", loopback, c.Status.Ports.Etcd)
}

// EtcdPeerURL is etcd's (only) peer address.
func EtcdPeerURL(c *v1alpha1.Cluster) string {
	return fmt.Sprintf("https://%s:%d", loopback, c.Status.Ports.EtcdPeer)
}

// EtcdClientTLS is the client identity the API server (and snapshots) use.
func EtcdClientTLS(d clusterdir.Dir) transport.TLSInfo {
	return transport.TLSInfo{
		CertFile:      pkiPath(d, etcdClientName+".crt"),
		KeyFile:       pkiPath(d, etcdClientName+".key"),
		TrustedCAFile: pkiPath(d, caName+".crt"),
	}
}

func etcdArgs(d clusterdir.Dir, c *v1alpha1.Cluster) []string {
	return []string{
		"--data-dir=" + d.Etcd(),
		"--listen-client-url=" + EtcdURL(c),
		"--listen-peer-url=" + EtcdPeerURL(c),
		"--cert-file=" + pkiPath(d, etcdServerName+".crt"),
		"--key-file=" + pkiPath(d, etcdServerName+".key"),
		"--trusted-ca-file=" + pkiPath(d, caName+".crt"),
	}
}

func apiServerArgs(d clusterdir.Dir, c *v1alpha1.Cluster) []string {
	return []string{
		"--bind-address=" + loopback,
		"--secure-port=" + strconv.Itoa(c.Status.Ports.APIServer),
		"--etcd-servers=" + EtcdURL(c),
		"--etcd-cafile=" + pkiPath(d, caName+".crt"),
		"--etcd-certfile=" + pkiPath(d, etcdClientName+".crt"),
		"--etcd-keyfile=" + pkiPath(d, etcdClientName+".key"),
		"--client-ca-file=" + pkiPath(d, caName+".crt"),
		"--tls-cert-file=" + pkiPath(d, apiServerName+".crt"),
		"--tls-private-key-file=" + pkiPath(d, apiServerName+".key"),
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction",
		"--default-not-ready-toleration-seconds=" + tolerationSeconds(c),
		"--default-unreachable-toleration-seconds=" + tolerationSeconds(c),
		"--service-account-issuer=https://" + kubernetesSvcDomain,
		"--service-account-key-file=" + pkiPath(d, "sa.pub"),
		"--service-account-signing-key-file=" + pkiPath(d, "sa.key"),
		"--service-cluster-ip-range=" + c.Networking.ServiceSubnet,
		"--allow-privileged=true",
		"--audit-policy-file=" + d.AuditPolicy(),
		"--audit-log-path=" + d.Log("audit"),
		"--audit-log-maxsize=100",
		"--audit-log-maxbackup=3",
		// Batched: events are written by a background worker, not one
		// write per request on the request's path.
		"--audit-log-mode=batch",
		"--egress-selector-config-file=" + egressConfigFile(d),
	}
}

func tolerationSeconds(c *v1alpha1.Cluster) string {
	return strconv.Itoa(int(c.NodeLifecycle.PodEvictionToleration.Duration / time.Second))
}

func controllerManagerArgs(d clusterdir.Dir, c *v1alpha1.Cluster) []string {
	nl := c.NodeLifecycle
	return []string{
		"--kubeconfig=" + d.ComponentKubeconfig(controllerMgrName),
		"--bind-address=" + loopback,
		"--secure-port=0", // nothing scrapes it; one port fewer to allocate
		"--leader-elect=false",
		"--use-service-account-credentials=true",
		"--service-account-private-key-file=" + pkiPath(d, "sa.key"),
		"--root-ca-file=" + pkiPath(d, caName+".crt"),
		"--cluster-signing-cert-file=" + pkiPath(d, caName+".crt"),
		"--cluster-signing-key-file=" + pkiPath(d, caName+".key"),
		"--allocate-node-cidrs=true",
		"--cluster-cidr=" + c.Networking.PodSubnet,
		"--node-cidr-mask-size=24",
		"--service-cluster-ip-range=" + c.Networking.ServiceSubnet,
		"--node-monitor-period=" + nl.NodeMonitorPeriod.Duration.String(),
		"--node-monitor-grace-period=" + nl.NodeMonitorGracePeriod.Duration.String(),
		"--node-startup-grace-period=" + nl.NodeStartupGracePeriod.Duration.String(),
		"--profiling=false",
		// Upstream's 20 QPS paces a ReplicaSet of thousands to a crawl; a
		// simulator's API server has the room.
		"--kube-api-qps=1000",
		"--kube-api-burst=2000",
		// The TTL controller rewrites every node's annotation as the cluster
		// grows, for kubelets' caches that simulated nodes do not have.
		"--controllers=*,-" + ttlController,
	}
}

const ttlController = "ttl-controller"

func schedulerArgs(d clusterdir.Dir, c *v1alpha1.Cluster) []string {
	return []string{
		"--config=" + schedulerConfigFile(d),
		"--bind-address=" + loopback,
		"--secure-port=0",
	}
}

func schedulerConfigFile(d clusterdir.Dir) string { return filepath.Join(d.Path, "scheduler.yaml") }

// schedulerConfig lifts the client's 50 QPS, which caps binding at about
// 50 pods/s, and leaves the scheduling algorithm as upstream's.
const schedulerConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %s
  qps: 5000
  burst: 10000
leaderElection:
  leaderElect: false
enableProfiling: false
`

func writeSchedulerConfig(d clusterdir.Dir, c *v1alpha1.Cluster) error {
	cfg := fmt.Appendf(nil, schedulerConfig, d.ComponentKubeconfig(schedulerName))
	if p := c.Scheduler.PercentageOfNodesToScore; p != nil {
		cfg = fmt.Appendf(cfg, "percentageOfNodesToScore: %d\n", *p)
	}
	return os.WriteFile(schedulerConfigFile(d), cfg, 0o600)
}

func kubeletSimArgs(d clusterdir.Dir, c *v1alpha1.Cluster) []string {
	// Two renewals per grace period (a kubelet does four: 10s of 40s).
	// Lease renewals are most of a big idle cluster's writes — at 10,000
	// nodes four per period kept the API server near two cores — and one
	// late renewal still leaves half the grace period to spare.
	renew := c.NodeLifecycle.NodeMonitorGracePeriod.Duration / 2
	return []string{
		"--kubeconfig=" + d.ComponentKubeconfig(kubeletSimName),
		"--manage-all-nodes",
		"--holder=kubesim-" + c.Name,
		"--node-lease-duration=" + c.NodeLifecycle.NodeMonitorGracePeriod.Duration.String(),
		"--node-lease-renew-interval=" + renew.String(),
		"--node-ip-range=" + c.Networking.NodeSubnet,
		"--stages=" + c.Stages,
	}
}

func deschedulerArgs(d clusterdir.Dir, c *v1alpha1.Cluster) []string {
	return []string{
		"--kubeconfig=" + d.ComponentKubeconfig(deschedulerName),
		"--policy=" + d.DeschedulerPolicy(),
		"--interval=" + c.Descheduler.Interval.Duration.String(),
	}
}

// etcdReady asks etcd's /health endpoint, as the API server's client.
func etcdReady(ctx context.Context, d clusterdir.Dir, c *v1alpha1.Cluster) error {
	tls := EtcdClientTLS(d)
	client, err := tlsClient(tls.TrustedCAFile, tls.CertFile, tls.KeyFile)
	if err != nil {
		return err
	}
	return getOK(ctx, client, EtcdURL(c)+"/health")
}

// APIServerReady asks the API server's /readyz endpoint, as the admin.
func APIServerReady(ctx context.Context, d clusterdir.Dir, c *v1alpha1.Cluster) error {
	client, err := tlsClient(pkiPath(d, caName+".crt"), pkiPath(d, adminName+".crt"), pkiPath(d, adminName+".key"))
	if err != nil {
		return err
	}
	return getOK(ctx, client, APIServerURL(c)+"/readyz")
}

func getOK(ctx context.Context, client *http.Client, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}

// gcPercent is the GOGC of every component: a simulator's control plane
// churns through short-lived objects, and collecting garbage four times
// less often spends memory the machine has (a few hundred MB per
// component at 10,000 pods) to save CPU it has not.
const gcPercent = "400"
