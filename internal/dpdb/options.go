package dpdb

import (
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/leaderelection"

	"github.com/kubesim/kubesim/internal/credentials"
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
	// WebhookPort, if not 0, serves the eviction webhook on
	// WebhookAddress, with WebhookCertFile and WebhookKeyFile, or else
	// with a certificate the controller makes itself (WebhookService).
	WebhookPort     int
	WebhookAddress  string
	WebhookCertFile string
	WebhookKeyFile  string
	// WebhookService ("namespace/name") is the Service the API server
	// calls the webhook through; with no certificate files the controller
	// makes a CA and a certificate for <name>.<namespace>.svc and
	// WebhookExtraSANs, and writes the CA into the caBundle of its
	// webhooks in the ValidatingWebhookConfiguration WebhookConfiguration.
	WebhookService       string
	WebhookConfiguration string
	WebhookExtraSANs     []string
	// WebhookClientCA, if set, makes the webhook require a client
	// certificate of this CA whose common name is WebhookClientUser: the
	// API server's, in a kubesim cluster. Without it anyone who reaches
	// the port may ask for evictions (and take the federation's lock).
	WebhookClientCA   string
	WebhookClientUser string
	// LeaderElect makes replicas elect a leader through the Lease
	// LeaderElectionNamespace/LeaderElectionName (empty namespace: the
	// Namespace above): only the leader syncs DPDBs, publishes the
	// webhook's CA and admits evictions; the others refuse them and
	// report not ready, so that a Service sends the webhook's calls to the
	// leader only. Off, the one process leads from the start.
	LeaderElect             bool
	LeaderElectionName      string
	LeaderElectionNamespace string
	// LeaderElectionIdentity names this replica in the Lease; empty means
	// the host name (a pod's name) and a random suffix.
	LeaderElectionIdentity string
	// LeaseDuration, RenewDeadline and RetryPeriod are client-go's
	// leader-election timings (its defaults: 15s, 10s, 2s).
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
}

// DefaultLeaderElectionName is the leader's Lease, beside the eviction lock.
const DefaultLeaderElectionName = "dpdb-controller"

// DefaultOptions are the controller's defaults.
func DefaultOptions() Options {
	return Options{
		Namespace:        DefaultNamespace,
		FederationSecret: DefaultFederationSecret,
		ProbeInterval:    2 * time.Second,
		Workers:          4,
		// Inside a kubesim cluster the API server calls it on loopback.
		WebhookAddress:     "127.0.0.1",
		WebhookClientUser:  credentials.APIServerWebhookClientUser,
		LeaderElectionName: DefaultLeaderElectionName,
		LeaseDuration:      15 * time.Second,
		RenewDeadline:      10 * time.Second,
		RetryPeriod:        2 * time.Second,
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
	fs.IntVar(&o.WebhookPort, "webhook-port", o.WebhookPort, "port of the eviction webhook (0: none)")
	fs.StringVar(&o.WebhookAddress, "webhook-address", o.WebhookAddress, "IP address the webhook listens on (0.0.0.0: all)")
	fs.StringVar(&o.WebhookCertFile, "webhook-cert", o.WebhookCertFile, "the webhook's serving certificate (or none: see --webhook-service)")
	fs.StringVar(&o.WebhookKeyFile, "webhook-key", o.WebhookKeyFile, "the webhook's serving key")
	fs.StringVar(&o.WebhookService, "webhook-service", o.WebhookService,
		"NAMESPACE/NAME of the webhook's Service: without --webhook-cert, serve a certificate for NAME.NAMESPACE.svc made at start")
	fs.StringVar(&o.WebhookConfiguration, "webhook-configuration", o.WebhookConfiguration,
		"ValidatingWebhookConfiguration whose dpdb webhooks get the made certificate's CA as caBundle")
	fs.StringSliceVar(&o.WebhookExtraSANs, "webhook-extra-san", o.WebhookExtraSANs, "more DNS names or IP addresses for the made certificate")
	fs.StringVar(&o.WebhookClientCA, "webhook-client-ca", o.WebhookClientCA,
		"CA of the API server's client certificate: callers without one of it (and of --webhook-client-user) are refused (empty: any caller is served)")
	fs.StringVar(&o.WebhookClientUser, "webhook-client-user", o.WebhookClientUser, "common name of the API server's client certificate, with --webhook-client-ca")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect,
		"elect a leader among replicas: only it syncs and admits evictions; the others refuse them and are not ready")
	fs.StringVar(&o.LeaderElectionName, "leader-elect-resource-name", o.LeaderElectionName, "name of the leader's Lease")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-elect-resource-namespace", o.LeaderElectionNamespace,
		"namespace of the leader's Lease (empty: --namespace)")
	fs.StringVar(&o.LeaderElectionIdentity, "leader-elect-identity", o.LeaderElectionIdentity,
		"this replica's name in the Lease (empty: host name and a random suffix)")
	fs.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", o.LeaseDuration,
		"how long others wait after the leader's last renewal before taking over")
	fs.DurationVar(&o.RenewDeadline, "leader-elect-renew-deadline", o.RenewDeadline,
		"how long the leader tries to renew before it gives up leading (and exits)")
	fs.DurationVar(&o.RetryPeriod, "leader-elect-retry-period", o.RetryPeriod, "how often the Lease is tried")
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
	if err := o.validateWebhook(); err != nil {
		return err
	}
	if o.Workers < 1 {
		return fmt.Errorf("--workers: must be at least 1, got %d", o.Workers)
	}
	return o.validateLeaderElection()
}

// validateLeaderElection checks the Lease and timings client-go would
// otherwise refuse at start.
func (o *Options) validateLeaderElection() error {
	if !o.LeaderElect {
		return nil
	}
	if errs := validation.IsDNS1123Subdomain(o.LeaderElectionName); len(errs) > 0 || o.LeaderElectionName == lockLease {
		return fmt.Errorf("--leader-elect-resource-name: %q is not a Lease name other than the eviction lock's (%s)", o.LeaderElectionName, lockLease)
	}
	if ns := o.LeaderElectionNamespace; ns != "" && len(validation.IsDNS1123Label(ns)) > 0 {
		return fmt.Errorf("--leader-elect-resource-namespace: %q is not a namespace name", ns)
	}
	switch {
	case o.RetryPeriod <= 0:
		return fmt.Errorf("--leader-elect-retry-period: must be positive, got %s", o.RetryPeriod)
	case float64(o.RenewDeadline) <= leaderelection.JitterFactor*float64(o.RetryPeriod):
		return fmt.Errorf("--leader-elect-renew-deadline: must be more than %.1f times --leader-elect-retry-period (%s), got %s",
			leaderelection.JitterFactor, o.RetryPeriod, o.RenewDeadline)
	case o.LeaseDuration <= o.RenewDeadline:
		return fmt.Errorf("--leader-elect-lease-duration: must be more than --leader-elect-renew-deadline (%s), got %s", o.RenewDeadline, o.LeaseDuration)
	}
	return nil
}

// leaseNamespace is the namespace of the leader's Lease.
func (o *Options) leaseNamespace() string {
	if o.LeaderElectionNamespace != "" {
		return o.LeaderElectionNamespace
	}
	return o.Namespace
}

// validateWebhook checks the webhook's flags: certificate files, or a
// Service and a webhook configuration to make and publish one for.
func (o *Options) validateWebhook() error {
	if net.ParseIP(o.WebhookAddress) == nil {
		return fmt.Errorf("--webhook-address: %q is not an IP address (0.0.0.0 listens on all)", o.WebhookAddress)
	}
	files := o.WebhookCertFile != "" || o.WebhookKeyFile != ""
	selfManaged := o.WebhookService != "" || o.WebhookConfiguration != "" || len(o.WebhookExtraSANs) > 0
	switch {
	case o.WebhookClientCA != "" && o.WebhookClientUser == "":
		return fmt.Errorf("--webhook-client-user: required with --webhook-client-ca")
	case o.WebhookPort == 0 && (files || selfManaged || o.WebhookClientCA != ""):
		return fmt.Errorf("--webhook-port: required with the other --webhook-* flags")
	case o.WebhookPort == 0:
		return nil
	case files && selfManaged:
		return fmt.Errorf("--webhook-service, --webhook-configuration, --webhook-extra-san: only without --webhook-cert, which brings its own certificate")
	case files && (o.WebhookCertFile == "" || o.WebhookKeyFile == ""):
		return fmt.Errorf("--webhook-cert and --webhook-key: give both, or neither and --webhook-service")
	case files:
		return nil
	case o.WebhookService == "" || o.WebhookConfiguration == "":
		return fmt.Errorf("--webhook-service and --webhook-configuration: required with --webhook-port unless --webhook-cert and --webhook-key are given")
	}
	ns, name, ok := strings.Cut(o.WebhookService, "/")
	if !ok || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1035Label(name)) > 0 {
		return fmt.Errorf("--webhook-service: %q is not NAMESPACE/NAME of a Service", o.WebhookService)
	}
	if len(validation.IsDNS1123Subdomain(o.WebhookConfiguration)) > 0 {
		return fmt.Errorf("--webhook-configuration: %q is not a ValidatingWebhookConfiguration name", o.WebhookConfiguration)
	}
	for _, san := range o.WebhookExtraSANs {
		if net.ParseIP(san) == nil && len(validation.IsDNS1123Subdomain(san)) > 0 {
			return fmt.Errorf("--webhook-extra-san: %q is neither an IP address nor a DNS name", san)
		}
	}
	return nil
}
