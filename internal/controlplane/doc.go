// Package controlplane is a cluster's control plane as a table of
// components: etcd and the upstream components with their command lines,
// readiness and the files they read, assembled with the entries kubesim's
// own features declare (kubeletsim, descheduler, dpdb; see
// internal/component), and the bootstrap that writes what they need into
// the API before they start. The supervisor (internal/supervisor) runs the
// table; the credentials it uses are internal/credentials'.
package controlplane
