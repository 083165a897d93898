package controlplane

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

// ExplainPortName is the explain endpoint's port among the scheduler's ports.
const ExplainPortName = "explain"

// ExplainPort is the cluster's explain endpoint, 0 if it has none.
func ExplainPort(c *v1alpha1.Cluster) int { return c.Status.Ports.Get(KubeScheduler, ExplainPortName) }

// explainServingCert is the explain endpoint's certificate.
var explainServingCert = component.ServingCert{Name: "scheduler-explain", CommonName: "kubesim-scheduler-explain"}

// explainArgs are the kube-scheduler's recording flags (package recorder)
// for the cluster.
func explainArgs(d clusterdir.Dir, c *v1alpha1.Cluster) []string {
	args := []string{fmt.Sprintf("--explain-pods=%d", explainPods(c))}
	if explainPods(c) > 0 {
		args = append(args,
			fmt.Sprintf("--explain-port=%d", ExplainPort(c)),
			"--explain-cert="+credentials.Path(d, explainServingCert.Name+".crt"),
			"--explain-key="+credentials.Path(d, explainServingCert.Name+".key"),
			"--explain-client-ca="+credentials.CAFile(d))
	}
	return args
}

func explainPods(c *v1alpha1.Cluster) int32 {
	if p := c.Scheduler.ExplainPods; p != nil {
		return *p
	}
	return v1alpha1.DefaultExplainPods
}
