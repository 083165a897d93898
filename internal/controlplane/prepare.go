package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/credentials"
	"github.com/kubesim/kubesim/internal/pki"
	"github.com/kubesim/kubesim/internal/version"
)

// The files components read, each written by the component's Prepare
// before every start, from the cluster's config.

// AuditLog is the name of the API server's audit log.
const AuditLog = "audit"

// DefaultAuditPolicy records the metadata of every write, leaving out the
// constant churn of Lease renewals and Events, which would drown the rest,
// and the writes every pod takes from the system rather than from anyone's
// decision: the scheduler's binding and the simulated kubelet's status
// writes (two of a pod's three writes, whose records cost the API server
// CPU a simulation is short of).
const DefaultAuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: None
  verbs: ["get", "list", "watch"]
- level: None
  resources:
  - group: coordination.k8s.io
    resources: ["leases"]
  - group: ""
    resources: ["events"]
  - group: events.k8s.io
    resources: ["events"]
- level: None
  userGroups: ["system:nodes"]
  verbs: ["patch", "update"]
  resources:
  - group: ""
    resources: ["nodes/status", "pods/status"]
- level: None
  users: ["system:kube-scheduler"]
  verbs: ["create"]
  resources:
  - group: ""
    resources: ["pods/binding"]
- level: Metadata
`

// writeAPIServerFiles writes the API server's audit policy, egress
// selector configuration and admission configuration.
func writeAPIServerFiles(d clusterdir.Dir, c *v1alpha1.Cluster) error {
	if err := pki.WriteFile(d.AuditPolicy(), []byte(c.Status.AuditPolicy)); err != nil {
		return err
	}
	if err := writeAdmissionConfig(d); err != nil {
		return err
	}
	return os.WriteFile(egressConfigFile(d), fmt.Appendf(nil, egressConfig, egressSocket(d)), 0o600)
}

// The API server presents its webhook client certificate when it calls
// validating webhooks: the kubeconfig of the webhook admission plugin
// names, per host:port called, the credentials to use.
const admissionConfig = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ValidatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: %s
`

func admissionConfigFile(d clusterdir.Dir) string { return filepath.Join(d.Path, "admission.yaml") }
func webhookKubeconfigFile(d clusterdir.Dir) string {
	return filepath.Join(d.Path, "admission-webhook-kubeconfig.yaml")
}

// writeAdmissionConfig writes the admission configuration and the
// kubeconfig it names. Its one user is "*", any webhook: the dpdb
// webhook's port may move while the API server runs (the controller
// re-registers it), and the API server reads this file only at start. A
// webhook of the user's is shown the certificate too, which gives it
// nothing: the key stays here.
func writeAdmissionConfig(d clusterdir.Dir) error {
	kubeconfig := clientcmdapi.NewConfig()
	kubeconfig.AuthInfos["*"] = &clientcmdapi.AuthInfo{
		ClientCertificate: credentials.Path(d, apiServerWebhookClient.File+".crt"),
		ClientKey:         credentials.Path(d, apiServerWebhookClient.File+".key"),
	}
	data, err := clientcmd.Write(*kubeconfig)
	if err != nil {
		return err
	}
	if err := pki.WriteFile(webhookKubeconfigFile(d), data); err != nil {
		return err
	}
	return pki.WriteFile(admissionConfigFile(d), fmt.Appendf(nil, admissionConfig, webhookKubeconfigFile(d)))
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

// controllerManagerSyncedFile is written by the controller-manager once
// its informers have synced (patch 0004). It is removed before each start.
func controllerManagerSyncedFile(d clusterdir.Dir) string {
	return filepath.Join(d.Path, "controller-manager.synced")
}

// APIServerSetUpFile exists once kubesim has bootstrapped the API server
// (bootstrapThenReady): the RBAC policy and CRDs are there and it is ready.
// The controller-manager waits for it before it builds its controllers.
// The supervisor removes it as it starts (not as the API server restarts:
// what bootstrap wrote stays in etcd).
func APIServerSetUpFile(d clusterdir.Dir) string {
	return filepath.Join(d.Path, "kube-apiserver.set-up")
}

// PodControllersHeldFile holds the controller-manager's PodControllers
// while it exists: a clone writes it before its cluster first starts and
// removes it once the objects are loaded, and the controller-manager then
// starts again with them (components/podcontrollershold.go).
func PodControllersHeldFile(d clusterdir.Dir) string {
	return filepath.Join(d.Path, "pod-controllers.held")
}

// controllerManagerSyncedPatch writes that file; a build without it (a
// `go install`) has nothing to wait for.
const controllerManagerSyncedPatch = "k8s.io/kubernetes/0004-controller-manager-mark-informers-synced.patch"

// controllerManagerSynced is the controller-manager's readiness: its
// informers hold every object there was when it started, so a Deployment
// made now gets its ReplicaSet and pods at once.
func controllerManagerSynced(_ context.Context, d clusterdir.Dir, _ *v1alpha1.Cluster) error {
	if !version.HasPatch(controllerManagerSyncedPatch) {
		return nil
	}
	if _, err := os.Stat(controllerManagerSyncedFile(d)); err != nil {
		return errors.New("kube-controller-manager has not synced its informers yet")
	}
	return nil
}

func removeControllerManagerSynced(d clusterdir.Dir, _ *v1alpha1.Cluster) error {
	if err := os.Remove(controllerManagerSyncedFile(d)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
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
