package recorder

import (
	"fmt"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/component"
	"github.com/kubesim/kubesim/internal/credentials"
)

// In a kubesim cluster the kube-scheduler component records attempts as
// the cluster's config says, and serves them on a loopback port of its
// own with a certificate of the cluster's CA.

// PortName is the explain endpoint's port among the scheduler's ports.
const PortName = "explain"

// Port is the cluster's explain endpoint, 0 if it has none.
func Port(c *v1alpha1.Cluster) int { return c.Status.Ports.Get(schedulerName, PortName) }

// schedulerName is the scheduler's name among the components
// (controlplane.KubeScheduler, which imports this package).
const schedulerName = "kube-scheduler"

// ServingCert is the explain endpoint's certificate.
var ServingCert = component.ServingCert{Name: "scheduler-explain", CommonName: "kubesim-scheduler-explain"}

// SchedulerArgs are the kube-scheduler's recording flags for the cluster.
func SchedulerArgs(d clusterdir.Dir, c *v1alpha1.Cluster) []string {
	args := []string{fmt.Sprintf("--explain-pods=%d", pods(c))}
	if pods(c) > 0 {
		args = append(args,
			fmt.Sprintf("--explain-port=%d", Port(c)),
			"--explain-cert="+credentials.Path(d, ServingCert.Name+".crt"),
			"--explain-key="+credentials.Path(d, ServingCert.Name+".key"),
			"--explain-client-ca="+credentials.CAFile(d))
	}
	return args
}

func pods(c *v1alpha1.Cluster) int32 {
	if p := c.Scheduler.ExplainPods; p != nil {
		return *p
	}
	return v1alpha1.DefaultExplainPods
}
