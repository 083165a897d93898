package recorder

import (
	"fmt"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/credentials"
)

// In a kubesim cluster the kube-scheduler component records attempts as
// the cluster's config says, and serves them on a loopback port of its
// own with a certificate of the cluster's CA.

// certName is the explain endpoint's certificate in the cluster's pki/.
const certName = "scheduler-explain"

// SchedulerArgs are the kube-scheduler's recording flags for the cluster.
func SchedulerArgs(d clusterdir.Dir, c *v1alpha1.Cluster) []string {
	args := []string{fmt.Sprintf("--explain-pods=%d", pods(c))}
	if p := c.Status.Ports.SchedulerExplain; p != 0 && pods(c) > 0 {
		args = append(args,
			fmt.Sprintf("--explain-port=%d", p),
			"--explain-cert="+credentials.Path(d, certName+".crt"),
			"--explain-key="+credentials.Path(d, certName+".key"),
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

// PrepareScheduler gives a cluster made before `kubesim explain` the
// endpoint's certificate.
func PrepareScheduler(d clusterdir.Dir) error {
	return credentials.EnsureLoopbackServingCert(d, certName, "kubesim-scheduler-explain")
}
