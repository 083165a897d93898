// Package v1alpha1 holds the Stage API, group kwok.x-k8s.io, schema-compatible
// with KWOK's Stage so manifests written for KWOK apply unchanged. The CRD in
// deploy/crds is generated from these types: run `make generate` after a change.
//
// +kubebuilder:object:generate=true
// +groupName=kwok.x-k8s.io
package v1alpha1
