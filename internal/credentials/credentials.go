package controlplane

import (
	"fmt"
	"net"
	"os"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/pki"
)

// Names of the key pairs in a cluster's pki/ directory.
const (
	caName            = "ca"
	etcdCAName        = "etcd-ca"
	etcdServerName    = "etcd-server"
	etcdClientName    = "apiserver-etcd-client"
	apiServerName     = "apiserver"
	adminName         = "admin"
	controllerMgrName = "controller-manager"
	schedulerName     = "scheduler"
	kubeletSimName    = "kubelet-sim"
	kubeletSimUser    = "kubesim:kubelet-sim"
	deschedulerName   = "descheduler"
	deschedulerUser   = "kubesim:descheduler"
	dpdbName          = "dpdb-controller"
	dpdbUser          = "kubesim:dpdb-controller"
	dpdbWebhookName   = "dpdb-webhook"
	// schedulerExplainName is the scheduler's explain endpoint's certificate.
	schedulerExplainName = "scheduler-explain"
	// FederationUser is who other clusters of a DPDB federation are here.
	FederationUser      = "kubesim:dpdb-federation"
	adminUser           = "kubesim-admin"
	controllerMgrUser   = "system:kube-controller-manager"
	schedulerUser       = "system:kube-scheduler"
	systemMastersGroup  = "system:masters"
	nodesGroup          = "system:nodes"
	loopback            = "127.0.0.1"
	kubernetesSvcDomain = "kubernetes.default.svc.cluster.local"
)

// clientIdentities are the users that get a client certificate and a
// kubeconfig: the admin, and each component as its own identity so RBAC
// grants it exactly its upstream role.
var clientIdentities = []struct {
	file, user string
	groups     []string
}{
	{adminName, adminUser, []string{systemMastersGroup}},
	{controllerMgrName, controllerMgrUser, nil},
	{schedulerName, schedulerUser, nil},
	// In system:nodes, API Priority and Fairness treats the simulator as it
	// treats kubelets: Lease and node-status writes at node-high priority,
	// the rest at system, ahead of workloads. Without it a pod-delete storm
	// starved the heartbeats and nodes went NotReady. (Being no
	// system:node:<name> user, it gets no node authorizer or NodeRestriction.)
	{kubeletSimName, kubeletSimUser, []string{nodesGroup}},
	{deschedulerName, deschedulerUser, nil},
	{dpdbName, dpdbUser, nil},
}

// WriteCredentials makes the cluster's CA, every certificate its components
// need, and the service-account signing key, all mode 0600.
func WriteCredentials(d clusterdir.Dir, c *v1alpha1.Cluster) error {
	if err := os.MkdirAll(d.PKI(), 0o700); err != nil {
		return err
	}
	ca, err := pki.NewCA("kubesim-" + c.Name + "-ca")
	if err != nil {
		return err
	}
	// etcd trusts a CA of its own, as kubeadm's etcd does: no component key
	// and no client certificate the controller-manager signs (with the
	// cluster CA) can read etcd directly, past RBAC.
	etcdCA, err := pki.NewCA("kubesim-" + c.Name + "-etcd-ca")
	if err != nil {
		return err
	}
	firstServiceIP, err := firstIP(c.Networking.ServiceSubnet)
	if err != nil {
		return err
	}
	localIPs := []net.IP{net.ParseIP(loopback)}
	type issue struct {
		by   *pki.KeyPair
		spec pki.CertSpec
	}
	certs := map[string]issue{
		etcdServerName: {etcdCA, pki.CertSpec{CommonName: "etcd", DNSNames: []string{"localhost"}, IPs: localIPs, Server: true, Client: true}},
		etcdClientName: {etcdCA, pki.CertSpec{CommonName: "kube-apiserver-etcd-client", Client: true}},
		apiServerName: {ca, pki.CertSpec{
			CommonName: "kube-apiserver",
			DNSNames:   []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", kubernetesSvcDomain},
			IPs:        append(localIPs, firstServiceIP),
			Server:     true,
		}},
	}
	for _, id := range clientIdentities {
		certs[id.file] = issue{ca, pki.CertSpec{CommonName: id.user, Organizations: id.groups, Client: true}}
	}
	for name, kp := range map[string]*pki.KeyPair{caName: ca, etcdCAName: etcdCA} {
		if err := kp.Write(d.PKI(), name); err != nil {
			return fmt.Errorf("writing %s certificate: %w", name, err)
		}
	}
	for name, c := range certs {
		kp, err := c.by.Issue(c.spec)
		if err != nil {
			return err
		}
		if err := kp.Write(d.PKI(), name); err != nil {
			return fmt.Errorf("writing %s certificate: %w", name, err)
		}
	}
	return pki.WriteServiceAccountKey(d.PKI())
}

// ensureClientIdentity issues, with the cluster's CA, a client identity a
// cluster made by an older kubesim lacks, and writes its kubeconfig.
func ensureClientIdentity(d clusterdir.Dir, c *v1alpha1.Cluster, file string) error {
	for _, id := range clientIdentities {
		if id.file == file {
			if err := issueIfMissing(d, file, id.user, id.groups); err != nil {
				return err
			}
		}
	}
	cfg, err := BuildKubeconfig(d, c, file)
	if err != nil {
		return err
	}
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return err
	}
	return pki.WriteFileAtomic(d.ComponentKubeconfig(file), data)
}

// issueIfMissing issues a client certificate for user with the cluster's
// CA unless pki/<file>.crt exists.
func issueIfMissing(d clusterdir.Dir, file, user string, groups []string) error {
	if fileExists(pkiPath(d, file+".crt")) {
		return nil
	}
	ca, err := pki.Load(d.PKI(), caName)
	if err != nil {
		return err
	}
	kp, err := ca.Issue(pki.CertSpec{CommonName: user, Organizations: groups, Client: true})
	if err != nil {
		return err
	}
	if err := kp.Write(d.PKI(), file); err != nil {
		return fmt.Errorf("writing %s certificate: %w", file, err)
	}
	return nil
}

// federationName is the key pair other clusters of a DPDB federation use
// to reach this one (as FederationUser).
const federationName = "dpdb-federation"

// FederationKubeconfig is a kubeconfig for this cluster that other
// clusters of a DPDB federation use: its identity (FederationUser) may
// only read PodDisruptionBudgets and take lock Leases in kubesim-dpdb.
func FederationKubeconfig(d clusterdir.Dir, c *v1alpha1.Cluster) ([]byte, error) {
	if err := issueIfMissing(d, federationName, FederationUser, nil); err != nil {
		return nil, err
	}
	cfg, err := BuildKubeconfig(d, c, federationName)
	if err != nil {
		return nil, err
	}
	return clientcmd.Write(*cfg)
}

// ContextName is the kubeconfig context (and cluster and user) of a cluster.
func ContextName(clusterName string) string { return "kubesim-" + clusterName }

// APIServerURL is where the cluster's API server listens.
func APIServerURL(c *v1alpha1.Cluster) string {
	return fmt.Sprintf("https://%s:%d", loopback, c.Status.Ports.APIServer)
}

// WriteKubeconfigs writes the admin kubeconfig and the components' ones,
// pointing at the API server's current port.
func WriteKubeconfigs(d clusterdir.Dir, c *v1alpha1.Cluster) error {
	for _, id := range clientIdentities {
		if !fileExists(pkiPath(d, id.file+".crt")) {
			continue // an identity newer than the cluster: its Prepare makes it
		}
		cfg, err := BuildKubeconfig(d, c, id.file)
		if err != nil {
			return err
		}
		path := d.ComponentKubeconfig(id.file)
		if id.file == adminName {
			path = d.Kubeconfig()
		}
		data, err := clientcmd.Write(*cfg)
		if err != nil {
			return err
		}
		// Atomic: a port move rewrites them while components may read them.
		if err := pki.WriteFileAtomic(path, data); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return nil
}

// AdminKubeconfig returns the admin kubeconfig of a cluster, its context
// named kubesim-<name> and current.
func AdminKubeconfig(d clusterdir.Dir, c *v1alpha1.Cluster) (*clientcmdapi.Config, error) {
	return BuildKubeconfig(d, c, adminName)
}

// BuildKubeconfig makes a kubeconfig with the certificate of the given
// client identity embedded.
func BuildKubeconfig(d clusterdir.Dir, c *v1alpha1.Cluster, identity string) (*clientcmdapi.Config, error) {
	ca, err := os.ReadFile(pkiPath(d, caName+".crt"))
	if err != nil {
		return nil, err
	}
	kp, err := pki.Load(d.PKI(), identity)
	if err != nil {
		return nil, err
	}
	keyPEM, err := kp.KeyPEM()
	if err != nil {
		return nil, err
	}
	name := ContextName(c.Name)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: APIServerURL(c), CertificateAuthorityData: ca}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{ClientCertificateData: kp.CertPEM(), ClientKeyData: keyPEM}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	cfg.CurrentContext = name
	return cfg, nil
}

// firstIP is the first usable address of a CIDR: the kubernetes Service's
// ClusterIP, which the serving certificate must name.
func firstIP(cidr string) (net.IP, error) {
	_, n, err := net.ParseCIDR(cidr)
	if err != nil {
		return nil, err
	}
	ip := n.IP.To4()
	out := make(net.IP, len(ip))
	copy(out, ip)
	out[len(out)-1]++
	return out, nil
}

// AdminClient is a client of the cluster as its admin: protobuf, no
// client-side throttling (kubesim's own bulk work must not be paced), and
// each request bounded by timeout.
func AdminClient(d clusterdir.Dir, timeout time.Duration) (kubernetes.Interface, error) {
	cfg, err := AdminConfig(d)
	if err != nil {
		return nil, err
	}
	cfg.Timeout = timeout
	return kubernetes.NewForConfig(cfg)
}

// AdminConfig is the admin's client configuration: protobuf, unthrottled.
func AdminConfig(d clusterdir.Dir) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", d.Kubeconfig())
	if err != nil {
		return nil, err
	}
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.QPS, cfg.Burst = 100000, 100000
	return cfg, nil
}
