// Package deploy holds manifests to run kubesim's controllers in a cluster;
// kubesim embeds the ones it also applies to its own clusters.
package deploy

import (
	"embed"
	_ "embed"
)

// KubeletSimClusterRole is the RBAC role of the kubelet simulator.
//
//go:embed kubelet-sim-clusterrole.yaml
var KubeletSimClusterRole []byte

// KubeletSimLeasesRole lets the kubelet simulator write node Leases; it is
// bound in kube-node-lease only.
//
//go:embed kubelet-sim-leases-role.yaml
var KubeletSimLeasesRole []byte

// DeschedulerClusterRole is the RBAC role of the descheduler component.
//
//go:embed descheduler-clusterrole.yaml
var DeschedulerClusterRole []byte

// StageCRD is the CustomResourceDefinition of kwok.x-k8s.io Stages,
// generated from apis/kwok/v1alpha1 by `make generate`.
//
//go:embed crds/kwok.x-k8s.io_stages.yaml
var StageCRD []byte

// Stages holds the built-in Stages, one directory per group: node and pod
// (in every set), fast and realistic (the pod lifecycles to choose from),
// chaos (failures that labels switch on).
//
//go:embed stages
var Stages embed.FS
