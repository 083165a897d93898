package kueue

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/credentials"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/kueue/pkg/config"
	"sigs.k8s.io/yaml"
)

func testCluster() *v1alpha1.Cluster {
	c := &v1alpha1.Cluster{Status: &v1alpha1.ClusterStatus{}}
	c.Status.Ports.Set(ComponentName, webhookPort, 40001)
	c.Status.Ports.Set(ComponentName, metricsPort, 40002)
	c.Status.Ports.Set(ComponentName, healthPort, 40003)
	return c
}

// The Configuration kubesim writes is one Kueue's own loader takes, strict,
// with kubesim's differences from upstream's defaults and those only.
func TestConfigurationLoadsInKueue(t *testing.T) {
	d := clusterdir.Dir{Path: t.TempDir()}
	if err := prepare(d, testCluster()); err != nil {
		t.Fatal(err)
	}
	scheme, err := newScheme()
	if err != nil {
		t.Fatal(err)
	}
	options, cfg, err := config.Load(scheme, filepath.Join(d.Path, "kueue-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if options.LeaderElection || *cfg.InternalCertManagement.Enable {
		t.Errorf("leader election %v, cert management %v: want both off", options.LeaderElection, *cfg.InternalCertManagement.Enable)
	}
	if cfg.Webhook.Host != "127.0.0.1" || *cfg.Webhook.Port != 40001 || cfg.Health.HealthProbeBindAddress != "127.0.0.1:40003" || cfg.Metrics.BindAddress != "127.0.0.1:40002" {
		t.Errorf("webhook %s:%d, health %s, metrics %s: want the cluster's loopback ports", cfg.Webhook.Host, *cfg.Webhook.Port, cfg.Health.HealthProbeBindAddress, cfg.Metrics.BindAddress)
	}
	if *cfg.Namespace != Namespace || !slices.Equal(cfg.Integrations.Frameworks, []string{"batch/job"}) || cfg.WaitForPodsReady == nil {
		t.Errorf("namespace %s, frameworks %v, waitForPodsReady %v: want upstream's defaults", *cfg.Namespace, cfg.Integrations.Frameworks, cfg.WaitForPodsReady)
	}
}

// Only the webhooks of Kueue's kinds and of Jobs are registered, each at
// its path on the cluster's loopback port; Jobs in kube-system and
// kueue-system are left alone.
func TestWebhookConfigurationsKeepKueueAndJobs(t *testing.T) {
	mutating, validating, err := webhookConfigurations("https://127.0.0.1:40001", []byte("ca"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, w := range mutating.Webhooks {
		names = append(names, w.Name)
		if u := *w.ClientConfig.URL; !strings.HasPrefix(u, "https://127.0.0.1:40001/mutate-") || w.ClientConfig.Service != nil || string(w.ClientConfig.CABundle) != "ca" {
			t.Errorf("webhook %s: url %s, service %v", w.Name, u, w.ClientConfig.Service)
		}
	}
	for _, w := range validating.Webhooks {
		names = append(names, w.Name)
		if w.Name == "vjob.kb.io" && (w.NamespaceSelector == nil || !slices.Contains(w.NamespaceSelector.MatchExpressions[0].Values, Namespace)) {
			t.Errorf("the Job webhook's namespaces: %+v", w.NamespaceSelector)
		}
	}
	slices.Sort(names)
	want := []string{"mclusterqueue.kb.io", "mjob.kb.io", "mresourceflavor.kb.io", "mworkload.kb.io",
		"vclusterqueue.kb.io", "vcohort.kb.io", "vjob.kb.io", "vresourceflavor.kb.io", "vworkload.kb.io"}
	if !slices.Equal(names, want) {
		t.Errorf("webhooks %v, want %v", names, want)
	}
}

// Every embedded CRD is one, of kueue.x-k8s.io; the converted ones among them.
func TestCRDs(t *testing.T) {
	var names []string
	for _, b := range crds() {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(b, crd); err != nil {
			t.Fatal(err)
		}
		names = append(names, crd.Spec.Names.Plural)
	}
	if len(names) != 11 {
		t.Errorf("%d CRDs, want Kueue's 11: %v", len(names), names)
	}
	for _, c := range convertedCRDs {
		if !slices.Contains(names, c) {
			t.Errorf("converted CRD %s is not embedded", c)
		}
	}
}

// A user's Configuration is checked as Kueue checks it, and against what
// kubesim offers, at create; what passes reaches Kueue under kubesim's
// own settings.
func TestUserConfiguration(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct{ name, body, want string }{
		{"unknown.yaml", "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfairShareing: {}\n", `unknown field "fairShareing"`},
		{"pods.yaml", "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nintegrations: {frameworks: [batch/job, pod]}\n", `integrations.frameworks: "pod" is not offered in kubesim`},
		{"multikueue.yaml", "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfeatureGates: {MultiKueue: true}\n", "featureGates.MultiKueue: not offered in kubesim; leave it false"},
	} {
		if _, err := ReadConfiguration(write(tc.name, tc.body)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}

	good := write("good.yaml", "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfairSharing: {}\nwaitForPodsReady: {timeout: 5m}\nleaderElection: {leaderElect: true}\n")
	b, err := ReadConfiguration(good)
	if err != nil {
		t.Fatal(err)
	}
	c := testCluster()
	c.Status.KueueConfig = string(b)
	d := clusterdir.Dir{Path: dir}
	if err := prepare(d, c); err != nil {
		t.Fatal(err)
	}
	scheme, err := newScheme()
	if err != nil {
		t.Fatal(err)
	}
	options, cfg, err := config.Load(scheme, configFile(d))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.FairSharing == nil || cfg.WaitForPodsReady.Timeout.Duration != 5*time.Minute {
		t.Errorf("fairSharing %v, waitForPodsReady %+v: want the user's", cfg.FairSharing, cfg.WaitForPodsReady)
	}
	if options.LeaderElection || *cfg.Webhook.Port != 40001 {
		t.Errorf("leader election %v, webhook port %d: want kubesim's", options.LeaderElection, *cfg.Webhook.Port)
	}
}

// The CRDs serving v1beta1 are converted by Kueue's webhook on its
// loopback port, written at install; the others keep their own.
func TestConversion(t *testing.T) {
	d := clusterdir.Dir{Path: t.TempDir()}
	if err := os.MkdirAll(d.PKI(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(credentials.CAFile(d), []byte("ca"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := testCluster()
	conv, err := conversion(d, c, "workloads.kueue.x-k8s.io")
	if err != nil || conv == nil || conv.Strategy != apiextensionsv1.WebhookConverter ||
		*conv.Webhook.ClientConfig.URL != "https://127.0.0.1:40001/convert" || string(conv.Webhook.ClientConfig.CABundle) != "ca" {
		t.Errorf("workloads' conversion: %+v, %v", conv, err)
	}
	if conv, err := conversion(d, c, "resourceflavors.kueue.x-k8s.io"); conv != nil || err != nil {
		t.Errorf("resourceflavors' conversion: %+v, %v; want the manifest's own", conv, err)
	}
}
