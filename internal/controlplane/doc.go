// Package controlplane is a cluster's control plane as processes: the
// component table (each component's command line, readiness, and the
// files it reads, written by its Prepare), the credentials and
// kubeconfigs they use, and the whole supervisor protocol:
//
//   - Launch starts `kubesim component supervisor` detached from the
//     caller and waits until the cluster is Ready;
//   - Supervise (in that process) holds the cluster's lock, writes its PID
//     file, starts the components in order, restarts any that exits,
//     writes the started file once all run, and stops them on SIGTERM;
//   - Running tells from the lock whether a supervisor is alive, and Stop
//     signals it and waits until it and its components are gone.
//
// The files of the protocol (lock, PID, started) are laid out by
// clusterdir; only this package reads or writes them.
package controlplane
