// Package supervisor runs a cluster's control plane and is the protocol
// the commands that start and stop a cluster speak with it:
//
//   - Launch starts `kubesim component supervisor` detached from the
//     caller and waits until the cluster is Ready;
//   - Supervise (in that process) holds the cluster's lock, writes its PID
//     file, starts the components of controlplane's table in order,
//     restarts any that exits, writes the started file once all run, and
//     stops them on SIGTERM;
//   - Running tells from the lock whether a supervisor is alive, and Stop
//     signals it and waits until it and its components are gone.
//
// The files of the protocol (lock, PID, started) are laid out by
// clusterdir; only this package reads or writes them.
package supervisor

import (
	"github.com/spf13/pflag"

	"github.com/kubesim/kubesim/internal/controlplane"
)

// Name is the supervisor's process (`kubesim component supervisor`) and
// its log.
const Name = "supervisor"

// Options is the command line of a cluster's supervisor.
type Options struct {
	Home string // kubesim's home directory
	Name string // the cluster's name
}

func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Home, "home", o.Home, "kubesim home directory")
	fs.StringVar(&o.Name, "name", o.Name, "cluster name")
}

// LogNames lists every log a cluster may have: one per component, the
// supervisor's and the API server's audit log.
func LogNames() []string {
	var names []string
	for _, c := range controlplane.Components() {
		names = append(names, c.Name)
	}
	return append(names, Name, controlplane.AuditLog)
}
