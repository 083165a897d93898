// Package v1alpha1 holds the Stage, ResourceUsage, ClusterResourceUsage and
// Metric APIs, group kwok.x-k8s.io, schema-compatible with KWOK's so
// manifests written for KWOK apply unchanged. The CRDs in deploy/crds are
// generated from these types: run `make generate` after a change.
//
// +kubebuilder:object:generate=true
// +groupName=kwok.x-k8s.io
package v1alpha1
