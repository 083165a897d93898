// Package deploy holds manifests to run kubesim's controllers in a cluster;
// kubesim embeds the ones it also applies to its own clusters.
package deploy

import _ "embed"

// KubeletSimClusterRole is the RBAC role of the kubelet simulator.
//
//go:embed kubelet-sim-clusterrole.yaml
var KubeletSimClusterRole []byte
