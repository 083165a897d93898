package controlplane

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/dpdb"
	"github.com/kubesim/kubesim/internal/kubeletsim"
	"github.com/kubesim/kubesim/internal/pki"
)

// The command lines of the components, derived from the cluster's config.
// kubesim's own components have typed options (ownArgs renders them); the
// upstream ones take their upstream flags.

// ownArgs renders the typed options of one of kubesim's own components.
func ownArgs[O Options](options func(clusterdir.Dir, *v1alpha1.Cluster) O) func(clusterdir.Dir, *v1alpha1.Cluster) []string {
	return func(d clusterdir.Dir, c *v1alpha1.Cluster) []string { return Args(options(d, c)) }
}

func pkiPath(d clusterdir.Dir, file string) string { return filepath.Join(d.PKI(), file) }

// etcdCAFile is the CA etcd trusts: its own, or, in a cluster made before
// etcd had one, the cluster's.
func etcdCAFile(d clusterdir.Dir) string {
	if path := pkiPath(d, etcdCAName+".crt"); fileExists(path) {
		return path
	}
	return pkiPath(d, caName+".crt")
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func etcdOptions(d clusterdir.Dir, c *v1alpha1.Cluster) *EtcdOptions {
	return &EtcdOptions{
		DataDir:       d.Etcd(),
		ClientURL:     EtcdURL(c),
		ClientSocket:  EtcdSocket(d),
		PeerURL:       EtcdPeerURL(c),
		CertFile:      pkiPath(d, etcdServerName+".crt"),
		KeyFile:       pkiPath(d, etcdServerName+".key"),
		TrustedCAFile: etcdCAFile(d),
	}
}

func apiServerArgs(d clusterdir.Dir, c *v1alpha1.Cluster) []string {
	return []string{
		"--bind-address=" + loopback,
		"--secure-port=" + strconv.Itoa(c.Status.Ports.APIServer),
		// Over etcd's unix socket, without TLS: every write, and every
		// event of every watch, would otherwise be encrypted and decrypted
		// twice on the same machine, and each of the API server's ~70
		// storage clients would make a TLS handshake at start.
		"--etcd-servers=unix://" + EtcdSocket(d),
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
		"--audit-log-path=" + d.Log(auditLog),
		"--audit-log-maxsize=100",
		"--audit-log-maxbackup=3",
		// Batched: events are written by a background worker, not one
		// write per request on the request's path.
		"--audit-log-mode=batch",
		"--egress-selector-config-file=" + egressConfigFile(d),
		// Nodes are reached by address, through the egress proxy, which
		// refuses them: never by name, which the host's DNS would be asked.
		"--kubelet-preferred-address-types=InternalIP",
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
	args := []string{
		"--config=" + schedulerConfigFile(d),
		"--bind-address=" + loopback,
		"--secure-port=0",
		fmt.Sprintf("--explain-pods=%d", explainPods(c)),
	}
	if p := c.Status.Ports.SchedulerExplain; p != 0 && explainPods(c) > 0 {
		args = append(args,
			fmt.Sprintf("--explain-port=%d", p),
			"--explain-cert="+pkiPath(d, schedulerExplainName+".crt"),
			"--explain-key="+pkiPath(d, schedulerExplainName+".key"),
			"--explain-client-ca="+pkiPath(d, caName+".crt"))
	}
	return args
}

func explainPods(c *v1alpha1.Cluster) int32 {
	if p := c.Scheduler.ExplainPods; p != nil {
		return *p
	}
	return v1alpha1.DefaultExplainPods
}

// prepareScheduler writes the scheduler's config and gives a cluster made
// before `kubesim explain` the explain endpoint's certificate.
func prepareScheduler(d clusterdir.Dir, c *v1alpha1.Cluster) error {
	if err := writeSchedulerConfig(d, c); err != nil {
		return err
	}
	return ensureLoopbackServingCert(d, schedulerExplainName, "kubesim-scheduler-explain")
}

func kubeletSimOptions(d clusterdir.Dir, c *v1alpha1.Cluster) *kubeletsim.Options {
	// Two renewals per grace period (a kubelet does four: 10s of 40s).
	// Lease renewals are most of a big idle cluster's writes — at 10,000
	// nodes four per period kept the API server near two cores — and one
	// late renewal still leaves half the grace period to spare.
	grace := c.NodeLifecycle.NodeMonitorGracePeriod.Duration
	o := kubeletsim.DefaultOptions()
	o.Kubeconfig = d.ComponentKubeconfig(kubeletSimName)
	o.ManageAllNodes = true
	o.Holder = "kubesim-" + c.Name
	o.LeaseDuration, o.LeaseRenewInterval = grace, grace/2
	o.NodeIPRange = c.Networking.NodeSubnet
	o.StageSet = c.Stages
	// The egress proxy refuses this port: simulated kubelets serve nothing.
	o.KubeletPort = kubeletsim.DefaultKubeletPort
	return &o
}

func deschedulerOptions(d clusterdir.Dir, c *v1alpha1.Cluster) *DeschedulerOptions {
	return &DeschedulerOptions{
		Kubeconfig: d.ComponentKubeconfig(deschedulerName),
		Policy:     d.DeschedulerPolicy(),
		Interval:   c.Descheduler.Interval.Duration,
	}
}

func dpdbOptions(d clusterdir.Dir, c *v1alpha1.Cluster) *dpdb.Options {
	o := dpdb.DefaultOptions()
	o.Kubeconfig = d.ComponentKubeconfig(dpdbName)
	o.ClusterName = c.Name
	if c.Status.Ports.DPDBWebhook != 0 {
		o.WebhookPort = c.Status.Ports.DPDBWebhook
		o.WebhookCertFile = pkiPath(d, dpdbWebhookName+".crt")
		o.WebhookKeyFile = pkiPath(d, dpdbWebhookName+".key")
	}
	return &o
}

// prepareDPDB gives a cluster made before the dpdb controller its
// identity and webhook certificate, and points a registered webhook at the
// controller's port, which may have moved.
func prepareDPDB(d clusterdir.Dir, c *v1alpha1.Cluster) error {
	if err := ensureDPDBCredentials(d, c); err != nil {
		return err
	}
	return followDPDBWebhookPort(d, c)
}

func ensureDPDBCredentials(d clusterdir.Dir, c *v1alpha1.Cluster) error {
	if err := ensureClientIdentity(d, c, dpdbName); err != nil {
		return err
	}
	return ensureLoopbackServingCert(d, dpdbWebhookName, "kubesim-dpdb-webhook")
}

// ensureLoopbackServingCert issues, once, the certificate a component
// serves a loopback endpoint with, signed by the cluster's CA.
func ensureLoopbackServingCert(d clusterdir.Dir, name, commonName string) error {
	if fileExists(pkiPath(d, name+".crt")) {
		return nil
	}
	ca, err := pki.Load(d.PKI(), caName)
	if err != nil {
		return err
	}
	kp, err := ca.Issue(pki.CertSpec{CommonName: commonName, IPs: []net.IP{net.ParseIP(loopback)}, Server: true})
	if err != nil {
		return err
	}
	return kp.Write(d.PKI(), name)
}
