package bench

import (
	"fmt"
	"time"

	"github.com/kubesim/kubesim/internal/controlplane"
	"github.com/kubesim/kubesim/internal/supervisor"
)

// phaseEnd is the event of the supervisor's startup record a phase of
// create ends at; the zero value is create's return.
type phaseEnd struct{ event, component string }

// CreatePhases are the parts of create → ready, in order, each ending at
// an event of the supervisor's startup record (or, for the last, at
// create's return).
var CreatePhases = []struct {
	Name   string
	EndsAt phaseEnd
}{
	{"prepare", phaseEnd{supervisor.EventStarted, controlplane.Etcd}}, // files, certificates, launching the supervisor
	{controlplane.Etcd, phaseEnd{supervisor.EventReady, controlplane.Etcd}},
	{controlplane.KubeAPIServer, phaseEnd{supervisor.EventReady, controlplane.KubeAPIServer}}, // serving
	// CRDs, RBAC, namespaces, written while the API server's own start-up
	// hooks finish, until it is ready.
	{"bootstrap", phaseEnd{supervisor.EventSetUp, controlplane.KubeAPIServer}},
	{"components", phaseEnd{supervisor.EventClusterStarted, ""}}, // the rest started and ready
	{"return", phaseEnd{}}, // create notices and writes the kubeconfig
}

// createPhases splits a create that began at began and returned at ended
// by the supervisor's startup record: the first of each phase's events.
func createPhases(events []supervisor.Event, began, ended time.Time) ([]time.Duration, error) {
	out := make([]time.Duration, len(CreatePhases))
	last := began
	for i, p := range CreatePhases {
		end, ok := ended, p.EndsAt == phaseEnd{}
		for _, e := range events {
			if !ok && e.Event == p.EndsAt.event && e.Component == p.EndsAt.component {
				end, ok = e.At, true
			}
		}
		if !ok {
			return nil, fmt.Errorf("the supervisor's startup record has no %s event of %q", p.EndsAt.event, p.EndsAt.component)
		}
		out[i], last = end.Sub(last), end
	}
	return out, nil
}
