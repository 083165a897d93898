// Package controlplane is a cluster's control plane as a table of
// components (table.go): etcd and the upstream components, a file each
// with its entry, command line, the files it reads, its readiness and its
// process's main (etcd.go, apiserver.go, controllermanager.go,
// scheduler.go), then the entries kubesim's own features declare
// (kubeletsim, descheduler, dpdb, usage; see internal/component for the
// declaration). Beside them: the bootstrap that writes what the components
// need into the API before they start, ports, the egress proxy's
// configuration and the upgrade of a cluster made by an older kubesim. The
// supervisor (internal/supervisor) runs the table, internal/entrypoint runs
// one entry's process; the credentials are internal/credentials'.
package controlplane
