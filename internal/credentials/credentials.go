// Package credentials is a cluster's certificates and kubeconfigs: its CA
// and etcd's, the serving and client certificates of its components (mode
// 0600, in pki/), the kubeconfigs made from them, and the admin's client.
package credentials

import (
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/component"
	"github.com/kubesim/kubesim/internal/pki"
)

// Names of the key pairs in a cluster's pki/ directory.
const (
	CA         = "ca"
	EtcdCA     = "etcd-ca"
	EtcdServer = "etcd-server"
	EtcdClient = "apiserver-etcd-client"
	APIServer  = "apiserver"
	Admin      = "admin"
	// FrontProxyCA signs one certificate, FrontProxyClient: the one the API
	// server presents to aggregated APIs (usage-metrics), as kubeadm's
	// front-proxy CA does. Of the cluster CA, every client certificate
	// would pass the API server's request-header authenticator's chain
	// check on every request before it is refused by name (~6 % of the
	// API server's CPU under load); of its own CA, none is even verified.
	FrontProxyCA     = "front-proxy-ca"
	FrontProxyClient = "front-proxy-client"
)

// FrontProxyClientUser is the front-proxy client certificate's common name,
// kubeadm's.
const FrontProxyClientUser = "front-proxy-client"

// APIServerWebhookClientUser is the API server's client certificate's
// common name when it calls kubesim's own webhooks and simulated
// kubelets, which accept no other (aggregated APIs: FrontProxyClientUser).
const APIServerWebhookClientUser = "kubesim:apiserver-webhook-client"

const (
	adminUser          = "kubesim-admin"
	systemMastersGroup = "system:masters"
	// Loopback is the address every listener of a cluster binds.
	Loopback = "127.0.0.1"
	// KubernetesServiceDomain is the kubernetes Service's name, which the
	// API server's certificate names and which issues service accounts.
	KubernetesServiceDomain = "kubernetes.default.svc.cluster.local"
)

// Path is the path of a file in the cluster's pki/ directory.
func Path(d clusterdir.Dir, file string) string { return filepath.Join(d.PKI(), file) }

// CAFile is the cluster CA's certificate.
func CAFile(d clusterdir.Dir) string { return Path(d, CA+".crt") }

// Exists reports whether a file exists.
func Exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// FrontProxyCAFile is the CA of the API server's front-proxy client
// certificate: what aggregated APIs trust request headers from.
func FrontProxyCAFile(d clusterdir.Dir) string { return Path(d, FrontProxyCA+".crt") }

// frontProxyCerts makes the front-proxy CA and its client certificate.
func frontProxyCerts(clusterName string) (*pki.KeyPair, map[string]issue, error) {
	ca, err := pki.NewCA("kubesim-" + clusterName + "-front-proxy-ca")
	if err != nil {
		return nil, nil, err
	}
	return ca, map[string]issue{FrontProxyClient: {ca, pki.CertSpec{CommonName: FrontProxyClientUser, Client: true}}}, nil
}

// EtcdCAFile is the CA etcd trusts, its own.
func EtcdCAFile(d clusterdir.Dir) string { return Path(d, EtcdCA+".crt") }

// admin is the identity of kubesim's own commands and of users.
var admin = component.Identity{File: Admin, User: adminUser, Groups: []string{systemMastersGroup}}

// Write makes the cluster's CA, the admin's certificate and every one its
// components need (their client identities and serving certificates), and
// the service-account signing key, all mode 0600.
func Write(d clusterdir.Dir, c *v1alpha1.Cluster, comps []component.Component) error {
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
	frontProxyCA, proxyCerts, err := frontProxyCerts(c.Name)
	if err != nil {
		return err
	}
	certs := etcdCerts(etcdCA)
	maps.Copy(certs, proxyCerts)
	certs[APIServer] = issue{ca, pki.CertSpec{
		CommonName: "kube-apiserver",
		DNSNames:   []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", KubernetesServiceDomain},
		IPs:        []net.IP{net.ParseIP(Loopback), firstServiceIP},
		Server:     true,
	}}
	certs[admin.File] = clientCert(ca, admin)
	for _, comp := range comps {
		if comp.Identity != nil {
			certs[comp.Identity.File] = clientCert(ca, *comp.Identity)
		}
		for _, id := range comp.ClientCerts {
			certs[id.File] = clientCert(ca, id)
		}
		for _, sc := range comp.ServingCerts {
			certs[sc.Name] = servingCert(ca, sc)
		}
	}
	for name, kp := range map[string]*pki.KeyPair{CA: ca, EtcdCA: etcdCA, FrontProxyCA: frontProxyCA} {
		if err := kp.Write(d.PKI(), name); err != nil {
			return fmt.Errorf("writing %s certificate: %w", name, err)
		}
	}
	if err := issueAll(d, certs); err != nil {
		return err
	}
	return pki.WriteServiceAccountKey(d.PKI())
}

// issue is a certificate to issue: by which CA, with what spec.
type issue struct {
	by   *pki.KeyPair
	spec pki.CertSpec
}

// etcdCerts are etcd's serving certificate and the API server's client
// certificate of it, both of etcd's own CA.
func etcdCerts(etcdCA *pki.KeyPair) map[string]issue {
	return map[string]issue{
		EtcdServer: {etcdCA, pki.CertSpec{CommonName: "etcd", DNSNames: []string{"localhost"}, IPs: []net.IP{net.ParseIP(Loopback)}, Server: true, Client: true}},
		EtcdClient: {etcdCA, pki.CertSpec{CommonName: "kube-apiserver-etcd-client", Client: true}},
	}
}

func clientCert(ca *pki.KeyPair, id component.Identity) issue {
	return issue{ca, pki.CertSpec{CommonName: id.User, Organizations: id.Groups, Client: true}}
}

func servingCert(ca *pki.KeyPair, sc component.ServingCert) issue {
	return issue{ca, pki.CertSpec{CommonName: sc.CommonName, DNSNames: sc.DNSNames, IPs: []net.IP{net.ParseIP(Loopback)}, Server: true}}
}

// issueAll issues and writes certs, by name.
func issueAll(d clusterdir.Dir, certs map[string]issue) error {
	for name, c := range certs {
		kp, err := c.by.Issue(c.spec)
		if err != nil {
			return err
		}
		if err := kp.Write(d.PKI(), name); err != nil {
			return fmt.Errorf("writing %s certificate: %w", name, err)
		}
	}
	return nil
}

// issueIfMissing issues a client certificate for id with the cluster's CA
// unless pki/<id.File>.crt exists.
func issueIfMissing(d clusterdir.Dir, id component.Identity) error {
	if Exists(Path(d, id.File+".crt")) {
		return nil
	}
	ca, err := pki.Load(d.PKI(), CA)
	if err != nil {
		return err
	}
	return issueAll(d, map[string]issue{id.File: clientCert(ca, id)})
}

// Kubeconfig issues id's certificate unless it exists, and returns a
// kubeconfig of the cluster for it.
func Kubeconfig(d clusterdir.Dir, c *v1alpha1.Cluster, id component.Identity) ([]byte, error) {
	if err := issueIfMissing(d, id); err != nil {
		return nil, err
	}
	cfg, err := BuildKubeconfig(d, c, id.File)
	if err != nil {
		return nil, err
	}
	return clientcmd.Write(*cfg)
}

// ContextName is the kubeconfig context (and cluster and user) of a cluster.
func ContextName(clusterName string) string { return "kubesim-" + clusterName }

// APIServerURL is where the cluster's API server listens.
func APIServerURL(c *v1alpha1.Cluster) string {
	return fmt.Sprintf("https://%s:%d", Loopback, c.Status.Ports.APIServer())
}

// WriteKubeconfigs writes the admin kubeconfig and the components' ones
// (ids), pointing at the API server's current port.
func WriteKubeconfigs(d clusterdir.Dir, c *v1alpha1.Cluster, ids []component.Identity) error {
	for _, id := range append([]component.Identity{admin}, ids...) {
		cfg, err := BuildKubeconfig(d, c, id.File)
		if err != nil {
			return err
		}
		path := d.ComponentKubeconfig(id.File)
		if id.File == Admin {
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

// WriteMissingKubeconfigs writes the kubeconfigs of ids that do not exist
// (an identity a cluster made by an older kubesim lacks).
func WriteMissingKubeconfigs(d clusterdir.Dir, c *v1alpha1.Cluster, ids []component.Identity) error {
	var missing []component.Identity
	for _, id := range ids {
		if !Exists(d.ComponentKubeconfig(id.File)) {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return WriteKubeconfigs(d, c, missing)
}

// AdminKubeconfig returns the admin kubeconfig of a cluster, its context
// named kubesim-<name> and current.
func AdminKubeconfig(d clusterdir.Dir, c *v1alpha1.Cluster) (*clientcmdapi.Config, error) {
	return BuildKubeconfig(d, c, Admin)
}

// BuildKubeconfig makes a kubeconfig with the certificate of the given
// client identity embedded.
func BuildKubeconfig(d clusterdir.Dir, c *v1alpha1.Cluster, identity string) (*clientcmdapi.Config, error) {
	ca, err := os.ReadFile(CAFile(d))
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
// each request bounded by timeout of real time (SetupConfig).
func AdminClient(d clusterdir.Dir, timeout time.Duration) (kubernetes.Interface, error) {
	cfg, err := SetupConfig(d, timeout)
	if err != nil {
		return nil, err
	}
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

// SetupConfig is AdminConfig for kubesim's own set-up writes, each bounded
// by timeout of real time: the API server reads a request's timeout on the
// cluster's clock, where at 60× the 10 s of a CRD's create would be a
// sixth of a real second, so it is sent scaled.
func SetupConfig(d clusterdir.Dir, timeout time.Duration) (*rest.Config, error) {
	cfg, err := AdminConfig(d)
	if err != nil {
		return nil, err
	}
	cfg.Timeout = timeout
	if timeout == 0 {
		return cfg, nil // nothing to scale: no need to read the cluster's file
	}
	if c, err := d.Load(); err == nil && c.Status != nil && c.Status.Clock != nil && c.Status.Clock.Scale > 1 {
		cfg.Timeout *= time.Duration(c.Status.Clock.Scale)
	}
	return cfg, nil
}

// IssueMissing issues, with the cluster's CAs, what a cluster made by an
// older kubesim lacks of what Write makes today: etcd's own CA and its
// certificates, the front-proxy CA and its client certificate, the
// components' client identities and serving certificates and their other
// client certificates. Kubeconfigs are WriteKubeconfigs'.
func IssueMissing(d clusterdir.Dir, comps []component.Component) error {
	if !Exists(FrontProxyCAFile(d)) {
		frontProxyCA, certs, err := frontProxyCerts(d.Name)
		if err != nil {
			return err
		}
		if err := frontProxyCA.Write(d.PKI(), FrontProxyCA); err != nil {
			return err
		}
		if err := issueAll(d, certs); err != nil {
			return err
		}
	}
	if !Exists(EtcdCAFile(d)) {
		etcdCA, err := pki.NewCA("kubesim-" + d.Name + "-etcd-ca")
		if err != nil {
			return err
		}
		if err := etcdCA.Write(d.PKI(), EtcdCA); err != nil {
			return err
		}
		if err := issueAll(d, etcdCerts(etcdCA)); err != nil {
			return err
		}
	}
	ca, err := pki.Load(d.PKI(), CA)
	if err != nil {
		return err
	}
	missing := map[string]issue{}
	for _, comp := range comps {
		ids := comp.ClientCerts
		if comp.Identity != nil {
			ids = append([]component.Identity{*comp.Identity}, ids...)
		}
		for _, id := range ids {
			if !Exists(Path(d, id.File+".crt")) {
				missing[id.File] = clientCert(ca, id)
			}
		}
		for _, sc := range comp.ServingCerts {
			if !Exists(Path(d, sc.Name+".crt")) {
				missing[sc.Name] = servingCert(ca, sc)
			}
		}
	}
	return issueAll(d, missing)
}
