package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDPDBControllerDeployed runs `kubesim dpdb-controller` with exactly
// the rights deploy/dpdb gives its ServiceAccount (impersonated, as no
// image runs) against a cluster whose own dpdb component is disabled.
func TestDPDBControllerDeployed(t *testing.T) {
	e := newEnv(t)
	e.createCluster("dpdbext", "--nodes", "1", "--disable-dpdb-controller")
	if pid := e.componentPID("dpdbext", "dpdb-controller"); pid != 0 {
		t.Fatalf("dpdb-controller runs although disabled (pid %d)", pid)
	}
	e.kubectl("apply", "-k", filepath.Join("..", "..", "deploy", "dpdb"))
	client, dyn := e.client(), dpdbClient(t, e.kubeconfig)
	e.apply(dpdbWorkload("web", "default", 2) + `---
apiVersion: policy.kubesim.io/v1alpha1
kind: DistributedPodDisruptionBudget
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  maxUnavailable: 50%
`)
	waitPods(t, client, "app=web", 2)

	sa := impersonating(t, filepath.Join(e.clusterDir("dpdbext"), "kubeconfig"), "system:serviceaccount:kubesim-dpdb:dpdb-controller")
	ctrl := exec.Command(binary, "dpdb-controller", "--kubeconfig", sa, "--cluster-name", "dpdbext")
	ctrl.Stdout, ctrl.Stderr = os.Stderr, os.Stderr
	if err := ctrl.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ctrl.Process.Kill(); _ = ctrl.Wait() }()
	// maxUnavailable 50% of 2 expected pods: 1 required, 1 allowed.
	waitAllowed(t, client, dyn, "default", "web", 1)

	// The ServiceAccount can do what the controller needs, nothing more.
	saClient := clientsetFor(t, mustConfig(t, sa))
	if _, err := saClient.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("listing pods as the controller's ServiceAccount: %v, want 403", err)
	}
	if err := saClient.PolicyV1().PodDisruptionBudgets("default").Delete(context.Background(), "web", metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("deleting a PDB as the controller's ServiceAccount: %v, want 403", err)
	}
}
