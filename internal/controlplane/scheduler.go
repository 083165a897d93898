package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/component"
	"github.com/kubesim/kubesim/internal/credentials"
	"github.com/kubesim/kubesim/upstream/components"
)

// KubeScheduler is upstream's kube-scheduler with the explain recorder
// installed: its entry, arguments, configuration, readiness and main.
const KubeScheduler = components.KubeScheduler

// schedulerComponent is the scheduler's entry.
// Its process starts with the API server's, and waits there until
// its grants exist (bootstrap writes them); create waits until it
// has synced, so a pod made the moment create returns is scheduled
// at once, and the process's start-up costs create nothing.
func schedulerComponent() component.Component {
	return component.Component{
		Name: KubeScheduler,
		Main: components.Mains()[KubeScheduler],
		Args: schedulerArgs, Prepare: writeSchedulerConfig,
		StartAfter: Etcd, Ready: schedulerSynced,
		ServingCerts: []component.ServingCert{explainServingCert},
		Ports:        []string{ExplainPortName},
		MemoryWeight: 15,
		Identity:     &schedulerIdentity}
}

// schedulerIdentity is its client: its upstream user, which RBAC's
// bootstrap policy grants exactly its role.
var schedulerIdentity = component.Identity{File: "scheduler", User: "system:kube-scheduler"}

func schedulerArgs(d clusterdir.Dir, c *v1alpha1.Cluster) []string {
	args := []string{
		"--config=" + schedulerConfigFile(d),
		"--bind-address=" + credentials.Loopback,
		"--secure-port=0",
		"--synced-file=" + schedulerSyncedFile(d),
	}
	return append(args, explainArgs(d, c)...)
}

func schedulerConfigFile(d clusterdir.Dir) string { return filepath.Join(d.Path, "scheduler.yaml") }

// schedulerConfig lifts the client's 50 QPS, which caps binding at about
// 50 pods/s, and leaves the scheduling algorithm as upstream's.
const schedulerConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %s
  qps: 5000
  burst: 10000
leaderElection:
  leaderElect: false
enableProfiling: false
`

// schedulerSyncedFile is written by the scheduler once its informers and
// event handlers have synced: what upstream's /readyz calls
// sched-handler-sync. It is removed before each start.
func schedulerSyncedFile(d clusterdir.Dir) string { return filepath.Join(d.Path, "scheduler.synced") }

// schedulerSynced is the scheduler's readiness: it has seen every object
// there was when it started, so a pod made now is scheduled at once.
func schedulerSynced(_ context.Context, d clusterdir.Dir, _ *v1alpha1.Cluster) error {
	if _, err := os.Stat(schedulerSyncedFile(d)); err != nil {
		return errors.New("kube-scheduler has not synced its informers yet")
	}
	return nil
}

func writeSchedulerConfig(d clusterdir.Dir, c *v1alpha1.Cluster) error {
	if err := os.Remove(schedulerSyncedFile(d)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	cfg := fmt.Appendf(nil, schedulerConfig, d.ComponentKubeconfig(schedulerIdentity.File))
	if p := c.Scheduler.PercentageOfNodesToScore; p != nil {
		cfg = fmt.Appendf(cfg, "percentageOfNodesToScore: %d\n", *p)
	}
	return os.WriteFile(schedulerConfigFile(d), cfg, 0o600)
}
