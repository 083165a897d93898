package kueue

import (
	"fmt"
	"os"
	"slices"

	"sigs.k8s.io/kueue/pkg/config"
	"sigs.k8s.io/yaml"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

// Namespace is Kueue's own namespace: its default managedJobsNamespaceSelector
// leaves the Jobs there, and kube-system's, to themselves.
const Namespace = "kueue-system"

// offeredFrameworks are the job integrations kubesim runs.
var offeredFrameworks = []string{"batch/job"}

// forcedGates are the feature gates kubesim sets whatever the user's
// Configuration says, and why.
var forcedGates = map[string]bool{
	"MultiKueue":         false, // no worker clusters to dispatch to
	"VisibilityOnDemand": true,  // registered with the aggregator at every start
}

// configuration is Kueue's Configuration for cluster c: the user's, if
// the cluster was made with one, under what a kubesim cluster needs — one
// replica, no certificate rotation, its ports on loopback, a client the
// simulator's API server need not throttle.
func configuration(c *v1alpha1.Cluster) ([]byte, error) {
	cfg := map[string]any{}
	if c.Status.KueueConfig != "" {
		if err := yaml.Unmarshal([]byte(c.Status.KueueConfig), &cfg); err != nil {
			return nil, err
		}
	}
	gates, _ := cfg["featureGates"].(map[string]any)
	if gates == nil {
		gates = map[string]any{}
	}
	for g, on := range forcedGates {
		gates[g] = on
	}
	for k, v := range map[string]any{
		"apiVersion":             "config.kueue.x-k8s.io/v1beta2",
		"kind":                   "Configuration",
		"namespace":              Namespace, // else read from a pod's service account
		"leaderElection":         map[string]any{"leaderElect": false},
		"internalCertManagement": map[string]any{"enable": false},
		"webhook":                map[string]any{"host": "127.0.0.1", "port": c.Status.Ports.Get(ComponentName, webhookPort)},
		"metrics":                mergeInto(cfg["metrics"], map[string]any{"bindAddress": loopbackPort(c, metricsPort)}),
		"health":                 map[string]any{"healthProbeBindAddress": loopbackPort(c, healthPort)},
		"clientConnection":       map[string]any{"qps": -1},
		"featureGates":           gates,
	} {
		cfg[k] = v
	}
	return yaml.Marshal(cfg)
}

// mergeInto lays over onto base, a section of the user's Configuration.
func mergeInto(base any, over map[string]any) map[string]any {
	out := map[string]any{}
	if m, ok := base.(map[string]any); ok {
		for k, v := range m {
			out[k] = v
		}
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// ReadConfiguration reads a user's Kueue Configuration file and checks it
// as Kueue's own loader does (strict: a field Kueue does not know is an
// error naming it), and against what kubesim offers.
func ReadConfiguration(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	check := &v1alpha1.Cluster{Status: &v1alpha1.ClusterStatus{KueueConfig: string(b)}}
	merged, err := configuration(check)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// Kueue's loader reads a file.
	f, err := os.CreateTemp("", "kubesim-kueue-config-*.yaml")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	_, err = f.Write(merged)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	tmp := f.Name()
	scheme, err := newScheme()
	if err != nil {
		return nil, err
	}
	_, cfg, err := config.Load(scheme, tmp)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, f := range cfg.Integrations.Frameworks {
		if !slices.Contains(offeredFrameworks, f) {
			return nil, fmt.Errorf("%s: integrations.frameworks: %q is not offered in kubesim; use %v", path, f, offeredFrameworks)
		}
	}
	var user struct {
		FeatureGates map[string]bool `json:"featureGates"`
	}
	if err := yaml.Unmarshal(b, &user); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for g, on := range user.FeatureGates {
		if want, forced := forcedGates[g]; forced && on != want {
			return nil, fmt.Errorf("%s: featureGates.%s: not offered in kubesim; leave it %v", path, g, want)
		}
	}
	return b, nil
}
