package dpdb

import (
	"strings"
	"testing"
	"time"
)

func TestValidateWebhookFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(o *Options)
		want string // "" for valid
	}{
		{"no webhook", func(o *Options) {}, ""},
		{"cert files", func(o *Options) { o.WebhookPort, o.WebhookCertFile, o.WebhookKeyFile = 9443, "c", "k" }, ""},
		{"self-managed", func(o *Options) {
			o.WebhookPort, o.WebhookAddress = 9443, "0.0.0.0"
			o.WebhookService, o.WebhookConfiguration = "kubesim-dpdb/dpdb-webhook", "kubesim-dpdb-controller"
			o.WebhookExtraSANs = []string{"127.0.0.1", "webhook.example.com"}
		}, ""},
		{"bad address", func(o *Options) { o.WebhookAddress = "localhost" }, "--webhook-address"},
		{"flags without port", func(o *Options) { o.WebhookService = "a/b" }, "--webhook-port"},
		{"cert without key", func(o *Options) { o.WebhookPort, o.WebhookCertFile = 9443, "c" }, "--webhook-cert and --webhook-key"},
		{"cert and service", func(o *Options) {
			o.WebhookPort, o.WebhookCertFile, o.WebhookKeyFile, o.WebhookService = 9443, "c", "k", "a/b"
		}, "--webhook-service"},
		{"neither", func(o *Options) { o.WebhookPort = 9443 }, "--webhook-service and --webhook-configuration"},
		{"service without configuration", func(o *Options) { o.WebhookPort, o.WebhookService = 9443, "a/b" }, "--webhook-service and --webhook-configuration"},
		{"service without namespace", func(o *Options) {
			o.WebhookPort, o.WebhookService, o.WebhookConfiguration = 9443, "b", "c"
		}, "--webhook-service: \"b\""},
		{"bad configuration", func(o *Options) {
			o.WebhookPort, o.WebhookService, o.WebhookConfiguration = 9443, "a/b", "Not_A_Name"
		}, "--webhook-configuration: \"Not_A_Name\""},
		{"bad SAN", func(o *Options) {
			o.WebhookPort, o.WebhookService, o.WebhookConfiguration = 9443, "a/b", "c"
			o.WebhookExtraSANs = []string{"not a name"}
		}, "--webhook-extra-san: \"not a name\""},
		{"leader election", func(o *Options) { o.LeaderElect = true }, ""},
		{"leader's Lease is the lock", func(o *Options) { o.LeaderElect, o.LeaderElectionName = true, lockLease }, "--leader-elect-resource-name"},
		{"bad Lease namespace", func(o *Options) { o.LeaderElect, o.LeaderElectionNamespace = true, "A" }, "--leader-elect-resource-namespace"},
		{"renew past lease", func(o *Options) { o.LeaderElect, o.RenewDeadline = true, 20*time.Second }, "--leader-elect-lease-duration"},
		{"retry past renew", func(o *Options) { o.LeaderElect, o.RetryPeriod = true, 9*time.Second }, "--leader-elect-renew-deadline"},
		{"timings unchecked without election", func(o *Options) { o.RetryPeriod = 0 }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := DefaultOptions()
			o.ClusterName = "red"
			tc.set(&o)
			err := o.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
				t.Fatalf("Validate: %v, want an error starting %q", err, tc.want)
			case err != nil && strings.Contains(err.Error(), "\n"):
				t.Fatalf("Validate: error of more than one line: %q", err)
			}
		})
	}
}
