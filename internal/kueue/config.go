package kueue

import (
	"sigs.k8s.io/yaml"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

// Namespace is Kueue's own namespace: its default managedJobsNamespaceSelector
// leaves the Jobs there, and kube-system's, to themselves.
const Namespace = "kueue-system"

// configuration is Kueue's Configuration for cluster c.
func configuration(c *v1alpha1.Cluster) ([]byte, error) {
	return yaml.Marshal(map[string]any{
		"apiVersion": "config.kueue.x-k8s.io/v1beta2",
		"kind":       "Configuration",
		// Upstream reads it from the pod's service account otherwise.
		"namespace":              Namespace,
		"leaderElection":         map[string]any{"leaderElect": false},
		"internalCertManagement": map[string]any{"enable": false},
		"webhook":                map[string]any{"host": "127.0.0.1", "port": c.Status.Ports.Get(ComponentName, webhookPort)},
		"metrics":                map[string]any{"bindAddress": loopbackPort(c, metricsPort)},
		"health":                 map[string]any{"healthProbeBindAddress": loopbackPort(c, healthPort)},
		// A simulator's API server has the room upstream's 300/500 guard
		// a real one's against.
		"clientConnection": map[string]any{"qps": -1},
		"featureGates": map[string]bool{
			// No worker clusters to dispatch to.
			"MultiKueue": false,
			// Its API server is not served yet.
			"VisibilityOnDemand": false,
		},
	})
}
