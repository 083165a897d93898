// Package v1alpha1 holds kubesim's own configuration types, group kubesim.io.
package v1alpha1
