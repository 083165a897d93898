// Package v1alpha1 holds kubesim's own configuration types, group kubesim.io,
// and its CustomMetric and ExternalMetric APIs. DeepCopy, and the CRDs in
// deploy/crds, are generated from these types: run `make generate` after a
// change (Cluster and Scenario are files, not objects: they get no CRD).
//
// +kubebuilder:object:generate=true
// +groupName=kubesim.io
package v1alpha1
