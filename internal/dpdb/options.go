package dpdb

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Defaults of where the federation's files live in each cluster.
const (
	// DefaultNamespace holds the federation Secret and the lock Leases.
	DefaultNamespace = "kubesim-dpdb"
	// DefaultFederationSecret maps each other cluster's name to a
	// kubeconfig for it (`kubesim federate` writes it).
	DefaultFederationSecret = "federation"
)

// Options configure the controller.
type Options struct {
	// Kubeconfig is this cluster's kubeconfig; empty means in-cluster.
	Kubeconfig string
	// ClusterName is this cluster's name: a federation entry naming it is
	// local, as is one naming no cluster.
	ClusterName string
	// Namespace holds the federation Secret (and the lock Leases).
	Namespace string
	// FederationSecret is the Secret of kubeconfigs for other clusters.
	FederationSecret string
	// ProbeInterval is how often other clusters are checked for reach; a
	// cluster not reached for three intervals is unreachable.
	ProbeInterval time.Duration
	// Workers sync DPDBs in parallel.
	Workers int
	// WebhookPort, if not 0, serves the eviction webhook on loopback with
	// WebhookCertFile and WebhookKeyFile.
	WebhookPort     int
	WebhookCertFile string
	WebhookKeyFile  string
}

// DefaultOptions are the controller's defaults.
func DefaultOptions() Options {
	return Options{
		Namespace:        DefaultNamespace,
		FederationSecret: DefaultFederationSecret,
		ProbeInterval:    2 * time.Second,
		Workers:          4,
	}
}

// AddFlags binds the options to flags, each field's value its default.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "kubeconfig of this cluster (empty: in-cluster configuration)")
	fs.StringVar(&o.ClusterName, "cluster-name", o.ClusterName, "this cluster's name in federation entries")
	fs.StringVar(&o.Namespace, "namespace", o.Namespace, "namespace of the federation Secret and the lock Leases")
	fs.StringVar(&o.FederationSecret, "federation-secret", o.FederationSecret, "Secret holding a kubeconfig per other cluster, keyed by cluster name")
	fs.DurationVar(&o.ProbeInterval, "probe-interval", o.ProbeInterval, "how often other clusters are probed")
	fs.IntVar(&o.Workers, "workers", o.Workers, "DPDBs synced in parallel")
	fs.IntVar(&o.WebhookPort, "webhook-port", o.WebhookPort, "loopback port of the eviction webhook (0: none)")
	fs.StringVar(&o.WebhookCertFile, "webhook-cert", o.WebhookCertFile, "the webhook's serving certificate")
	fs.StringVar(&o.WebhookKeyFile, "webhook-key", o.WebhookKeyFile, "the webhook's serving key")
}

// Validate checks the options; each error names its flag.
func (o *Options) Validate() error {
	if o.ClusterName == "" {
		return fmt.Errorf("--cluster-name: required: the name other clusters' federation entries use for this one")
	}
	if errs := validation.IsDNS1123Label(o.ClusterName); len(errs) > 0 {
		return fmt.Errorf("--cluster-name: %q is not a DNS label", o.ClusterName)
	}
	if errs := validation.IsDNS1123Label(o.Namespace); len(errs) > 0 {
		return fmt.Errorf("--namespace: %q is not a namespace name", o.Namespace)
	}
	if errs := validation.IsDNS1123Subdomain(o.FederationSecret); len(errs) > 0 {
		return fmt.Errorf("--federation-secret: %q is not a Secret name", o.FederationSecret)
	}
	if o.ProbeInterval < 100*time.Millisecond {
		return fmt.Errorf("--probe-interval: must be at least 100ms, got %s", o.ProbeInterval)
	}
	if o.WebhookPort < 0 || o.WebhookPort > 65535 {
		return fmt.Errorf("--webhook-port: %d is not a port (1-65535, or 0 for no webhook)", o.WebhookPort)
	}
	if o.WebhookPort != 0 && (o.WebhookCertFile == "" || o.WebhookKeyFile == "") {
		return fmt.Errorf("--webhook-cert and --webhook-key: required with --webhook-port")
	}
	if o.Workers < 1 {
		return fmt.Errorf("--workers: must be at least 1, got %d", o.Workers)
	}
	return nil
}
