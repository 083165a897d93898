package kueue

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"

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
