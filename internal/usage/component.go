package usage

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/deploy"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/component"
	"github.com/kubesim/kubesim/internal/credentials"
	"github.com/kubesim/kubesim/internal/kubeletsim"
)

// ComponentName is the process serving metrics.k8s.io in a kubesim cluster.
const ComponentName = "usage-metrics"

// The aggregated API's Service: the API server reaches the component by
// it, and verifies its certificate by its name.
const (
	ServiceNamespace = "kube-system"
	ServiceName      = "kubesim-usage-metrics"
)

var (
	identity    = component.Identity{File: ComponentName, User: "kubesim:usage-metrics"}
	servingCert = component.ServingCert{Name: ComponentName + "-serving", CommonName: "kubesim-usage-metrics",
		DNSNames: []string{ServiceName + "." + ServiceNamespace + ".svc"}}
)

// kubeletRoute: usage-metrics serves the simulated kubelets' port, KWOK's
// Metric paths, to the API server's node proxy.
var kubeletRoute = component.Route{Port: kubeletsim.DefaultKubeletPort, Socket: clusterdir.Dir.KubeletSocket,
	Down: "usage-metrics, which serves the simulated kubelet port, is not answering; see kubesim logs usage-metrics"}

// Component is the usage-metrics server as a process of a kubesim cluster.
// Its process starts beside the API server's, so it serves by its turn
// (Ready: it listens); it registers metrics.k8s.io then, and the cluster
// does not wait for its informers: create takes no longer for it.
func Component() component.Component {
	return component.Component{
		Name: ComponentName,
		Main: component.Main(ComponentName, DefaultOptions, Run),
		Args: component.OwnArgs(componentOptions),
		// `create cluster`'s flags of the options it reads.
		Flags: []component.Flag{
			{Name: "disable-usage-metrics", Usage: "serve no metrics.k8s.io from declared usage (kubectl top and CPU/memory HPAs then have no metrics)",
				Lands: component.At((*pflag.FlagSet).BoolVar, func(s *v1alpha1.ClusterSpec) *bool { return &s.Usage.Disabled })},
		},
		Enabled:      func(c *v1alpha1.Cluster) bool { return !c.Usage.Disabled },
		StartAfter:   "etcd",
		Prepare:      followPort,
		Ready:        component.Listening(ComponentName, ""),
		Setup:        register,
		Ports:        []string{""},
		Routes:       []component.Route{kubeletRoute},
		MemoryWeight: 5,
		Identity:     &identity,
		ServingCerts: []component.ServingCert{servingCert},
		Grants:       []component.Grant{{Role: deploy.UsageMetricsClusterRole}},
		CRDs:         deploy.UsageCRDs,
	}
}

// Options is the component's command line.
type Options struct {
	Kubeconfig string
	Port       int
	CertFile   string
	KeyFile    string
	// ProxyCAFile and ProxyNames: who may call, the API server's
	// aggregator (the CA and common names of its front-proxy certificate).
	ProxyCAFile string
	ProxyNames  []string
	// KubeletSocket, if set, is where the simulated nodes' kubelet port is
	// served (the Metrics' paths), for the API server's kubelet client:
	// the certificate of KubeletCAFile (the cluster CA) named KubeletClient.
	KubeletSocket string
	KubeletCAFile string
	KubeletClient string
	// DefaultRequestPercent: see v1alpha1.Usage.
	DefaultRequestPercent int
	// Window is the longest window a metric claims to be measured over.
	Window time.Duration
}

// DefaultOptions are the component's defaults.
func DefaultOptions() Options {
	return Options{DefaultRequestPercent: 50, Window: 15 * time.Second}
}

// AddFlags declares the options' flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "kubeconfig of the cluster")
	fs.IntVar(&o.Port, "port", o.Port, "loopback port to serve metrics.k8s.io on")
	fs.StringVar(&o.CertFile, "tls-cert-file", o.CertFile, "serving certificate")
	fs.StringVar(&o.KeyFile, "tls-private-key-file", o.KeyFile, "serving key")
	fs.StringVar(&o.ProxyCAFile, "requestheader-client-ca-file", o.ProxyCAFile, "CA of the API server's front-proxy client certificate")
	fs.StringSliceVar(&o.ProxyNames, "requestheader-allowed-names", o.ProxyNames, "common names of the API server's front-proxy client certificate")
	fs.StringVar(&o.KubeletSocket, "kubelet-socket", o.KubeletSocket, "unix socket to serve the simulated nodes' kubelet port on (KWOK Metrics' paths)")
	fs.StringVar(&o.KubeletCAFile, "kubelet-client-ca-file", o.KubeletCAFile, "CA of the API server's kubelet client certificate")
	fs.StringVar(&o.KubeletClient, "kubelet-client-name", o.KubeletClient, "common name of the API server's kubelet client certificate")
	fs.IntVar(&o.DefaultRequestPercent, "default-request-percent", o.DefaultRequestPercent, "usage of a container without declared usage, in percent of its requests")
	fs.DurationVar(&o.Window, "window", o.Window, "longest window a metric claims")
}

func componentOptions(d clusterdir.Dir, c *v1alpha1.Cluster) *Options {
	o := DefaultOptions()
	o.Kubeconfig = d.ComponentKubeconfig(identity.File)
	o.Port = c.Status.Ports.Get(ComponentName, "")
	o.CertFile = credentials.Path(d, servingCert.Name+".crt")
	o.KeyFile = credentials.Path(d, servingCert.Name+".key")
	o.ProxyCAFile = credentials.FrontProxyCAFile(d)
	o.ProxyNames = []string{credentials.FrontProxyClientUser}
	o.KubeletSocket = d.KubeletSocket()
	o.KubeletCAFile = credentials.CAFile(d)
	o.KubeletClient = credentials.APIServerWebhookClientUser
	if p := c.Usage.DefaultRequestPercent; p != nil {
		o.DefaultRequestPercent = int(*p)
	}
	return &o
}
