// Package v1alpha1 holds the DistributedPodDisruptionBudget API, group
// policy.kubesim.io. DeepCopy and the CRD in deploy/crds are generated from
// these types: run `make generate` after a change.
//
// +kubebuilder:object:generate=true
// +groupName=policy.kubesim.io
package v1alpha1
