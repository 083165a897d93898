package controlplane

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/component"
	"github.com/kubesim/kubesim/internal/credentials"
	"github.com/kubesim/kubesim/internal/kubeversion"
	"github.com/kubesim/kubesim/internal/pki"
	"github.com/kubesim/kubesim/upstream/components"
)

// KubeAPIServer is upstream's kube-apiserver, unchanged but for its
// command line and the files it reads: its entry, arguments, files and
// readiness. Bootstrap (bootstrap.go) sets it up once it serves.
const KubeAPIServer = components.KubeAPIServer

// apiServerComponent is the API server's entry.
func apiServerComponent() component.Component {
	return component.Component{
		Name: KubeAPIServer,
		Main: components.Mains()[KubeAPIServer],
		Args: apiServerArgs, Ready: apiServerServing, Setup: bootstrapThenReady, Prepare: writeAPIServerFiles, Barrier: true,
		Ports:        []string{""},
		ClientCerts:  []component.Identity{apiServerWebhookClient},
		MemoryWeight: 45,
		// As it starts, the API server closes etcd clients it made
		// for a while (probes, each resource's storage) while gRPC
		// still dials them: not etcd failing, which says otherwise
		// (connection refused, no such file).
		Quiet: []*regexp.Regexp{regexp.MustCompile(`grpc: addrConn\.createTransport failed to connect to .*(use of closed network connection|operation was canceled)`)}}
}

// apiServerWebhookClient is the certificate the API server presents to
// webhooks (admissionConfigFile): kubesim's own accept no other caller.
var apiServerWebhookClient = component.Identity{File: "apiserver-webhook-client", User: credentials.APIServerWebhookClientUser}

func apiServerArgs(d clusterdir.Dir, c *v1alpha1.Cluster) []string {
	return append(scaledTimeouts(c), []string{
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
		// certificate of the front-proxy CA, asserting the user in headers
		// that the aggregated server trusts from it alone.
		"--requestheader-client-ca-file=" + credentials.FrontProxyCAFile(d),
		"--requestheader-allowed-names=" + credentials.FrontProxyClientUser,
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + credentials.Path(d, credentials.FrontProxyClient+".crt"),
		"--proxy-client-key-file=" + credentials.Path(d, credentials.FrontProxyClient+".key"),
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
		// 2.4 GB. Without it pod writes cost more CPU (a read from etcd per
		// update or delete, a decode per watcher: 17 % of the API server's
		// while 10,000 pods were deleted); what a list or watch returns is
		// the same. extraArgs kube-apiserver
		// --watch-cache-sizes= brings it back.
		"--watch-cache-sizes=pods#0",
	}...)
}

// scaledTimeouts: serving a request, and etcd answering the health
// checks behind /readyz, are real work, which the API server times on the
// cluster's clock. At 60× upstream's 60 s would cut a request off at one
// real second (a big CRD's create under load takes longer), and the etcd
// checks' 2 s would fail /readyz whenever etcd takes 33 ms — which the
// supervisor then reads as an outage and restarts the controller-manager,
// whose start loads the server further. On a scaled clock each is kept
// that long in real time. Nothing in the cluster decides on them: they
// only bound work.
func scaledTimeouts(c *v1alpha1.Cluster) []string {
	if c.Status == nil || c.Status.Clock == nil || c.Status.Clock.Scale <= 1 {
		return nil
	}
	scale := time.Duration(c.Status.Clock.Scale)
	return []string{
		"--request-timeout=" + (time.Minute * scale).String(),
		// upstream's defaults, 2 s each
		"--etcd-healthcheck-timeout=" + (2 * time.Second * scale).String(),
		"--etcd-readycheck-timeout=" + (2 * time.Second * scale).String(),
	}
}

func tolerationSeconds(c *v1alpha1.Cluster) string {
	return strconv.Itoa(int(c.NodeLifecycle.PodEvictionToleration.Duration / time.Second))
}

// AuditLog is the name of the API server's audit log.
const AuditLog = "audit"

// DefaultAuditPolicy records the metadata of every write, leaving out the
// constant churn of Lease renewals and Events, which would drown the rest,
// and the writes every pod takes from the system rather than from anyone's
// decision: the scheduler's binding and the simulated kubelet's status
// writes (two of a pod's three writes, whose records cost the API server
// CPU a simulation is short of).
const DefaultAuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: None
  verbs: ["get", "list", "watch"]
- level: None
  resources:
  - group: coordination.k8s.io
    resources: ["leases"]
  - group: ""
    resources: ["events"]
  - group: events.k8s.io
    resources: ["events"]
- level: None
  userGroups: ["system:nodes"]
  verbs: ["patch", "update"]
  resources:
  - group: ""
    resources: ["nodes/status", "pods/status"]
- level: None
  users: ["system:kube-scheduler"]
  verbs: ["create"]
  resources:
  - group: ""
    resources: ["pods/binding"]
- level: Metadata
`

// writeAPIServerFiles writes the API server's audit policy, egress
// selector configuration and admission configuration.
func writeAPIServerFiles(d clusterdir.Dir, c *v1alpha1.Cluster) error {
	if err := pki.WriteFile(d.AuditPolicy(), []byte(c.Status.AuditPolicy)); err != nil {
		return err
	}
	if err := writeAdmissionConfig(d); err != nil {
		return err
	}
	return os.WriteFile(egressConfigFile(d), fmt.Appendf(nil, egressConfig, egressSocket(d)), 0o600)
}

// The API server presents its webhook client certificate when it calls
// validating webhooks: the kubeconfig of the webhook admission plugin
// names, per host:port called, the credentials to use.
const admissionConfig = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ValidatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: %s
`

func admissionConfigFile(d clusterdir.Dir) string { return filepath.Join(d.Path, "admission.yaml") }
func webhookKubeconfigFile(d clusterdir.Dir) string {
	return filepath.Join(d.Path, "admission-webhook-kubeconfig.yaml")
}

// writeAdmissionConfig writes the admission configuration and the
// kubeconfig it names. Its one user is "*", any webhook: the dpdb
// webhook's port may move while the API server runs (the controller
// re-registers it), and the API server reads this file only at start. A
// webhook of the user's is shown the certificate too, which gives it
// nothing: the key stays here.
func writeAdmissionConfig(d clusterdir.Dir) error {
	kubeconfig := clientcmdapi.NewConfig()
	kubeconfig.AuthInfos["*"] = &clientcmdapi.AuthInfo{
		ClientCertificate: credentials.Path(d, apiServerWebhookClient.File+".crt"),
		ClientKey:         credentials.Path(d, apiServerWebhookClient.File+".key"),
	}
	data, err := clientcmd.Write(*kubeconfig)
	if err != nil {
		return err
	}
	if err := pki.WriteFile(webhookKubeconfigFile(d), data); err != nil {
		return err
	}
	return pki.WriteFile(admissionConfigFile(d), fmt.Appendf(nil, admissionConfig, webhookKubeconfigFile(d)))
}

// APIServerSetUpFile exists once kubesim has bootstrapped the API server
// (bootstrapThenReady): the RBAC policy and CRDs are there and it is ready.
// The controller-manager waits for it before it builds its controllers.
// The supervisor removes it as it starts (not as the API server restarts:
// what bootstrap wrote stays in etcd).
func APIServerSetUpFile(d clusterdir.Dir) string {
	return filepath.Join(d.Path, "kube-apiserver.set-up")
}

// APIServerReady asks the API server's /readyz endpoint, as the admin:
// without the bootstrap hooks whose objects kubesim writes itself, in a
// cluster of kubesim's own Kubernetes version. Another version's API
// server writes its own default policy, which kubesim's version's would
// not be: there its hooks are waited for.
func APIServerReady(ctx context.Context, d clusterdir.Dir, c *v1alpha1.Cluster) error {
	return askAPIServer(ctx, d, c, readyPath(c))
}

// readyPath is c's API server's readiness (APIServerReady).
func readyPath(c *v1alpha1.Cluster) string {
	if !OwnVersion(c) {
		return "/readyz"
	}
	return APIServerReadyPath()
}

// OwnVersion reports whether c runs the Kubernetes version kubesim is
// built on, whose components are kubesim's own, patches included
// (version.HasPatch); another version's binary runs upstream's code.
func OwnVersion(c *v1alpha1.Cluster) bool {
	v, err := kubeversion.Lookup(c.Kubernetes)
	return err == nil && v.IsDefault()
}

// APIServerReadyPath is the API server's readiness without the post-start
// hooks whose objects kubesim writes itself (components.BootstrapHooks).
func APIServerReadyPath() string { return components.APIServerReadyPath() }

// apiServerServing asks whether the API server serves requests and reaches
// etcd; its post-start hooks (a fifth of a second of its start) may still
// run, and bootstrap writes meanwhile.
func apiServerServing(ctx context.Context, d clusterdir.Dir, c *v1alpha1.Cluster) error {
	return askAPIServer(ctx, d, c, "/readyz/etcd")
}

func askAPIServer(ctx context.Context, d clusterdir.Dir, c *v1alpha1.Cluster, path string) error {
	client, err := credentials.AdminHTTPClient(d)
	if err != nil {
		return err
	}
	return getOK(ctx, client, credentials.APIServerURL(c)+path)
}

// ProbeReadyz asks the API server's readiness with client (the admin's),
// as APIServerReady does: a hook whose objects kubesim wrote may still
// run after the cluster started, and is no outage.
func ProbeReadyz(ctx context.Context, client *http.Client, c *v1alpha1.Cluster) error {
	return getOK(ctx, client, credentials.APIServerURL(c)+readyPath(c))
}
