// Package v1alpha1 holds kubesim's own configuration types, group kubesim.io.
// DeepCopy is generated from these types: run `make generate` after a change.
//
// +kubebuilder:object:generate=true
package v1alpha1
