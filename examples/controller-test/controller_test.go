package web

import (
	"context"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kubesim/kubesim/pkg/kubesimtest"
)

func TestWeb(t *testing.T) {
	// Three nodes; a node that stops reporting is NotReady after 6s and
	// its pods are evicted 1s later (upstream: 50s and 5 minutes).
	c := kubesimtest.Start(t, kubesimtest.Nodes(3), kubesimtest.NodeFailure(6*time.Second, time.Second))
	runController(t, c)
	cs := kubernetes.NewForConfigOrDie(c.Config())
	ctx := context.Background()

	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "default", Labels: map[string]string{Label: "true"}},
		Data:       map[string]string{"replicas": "2"},
	}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// envtest has no scheduler, no controller-manager and no kubelets: there
	// the Deployment would stay without pods.
	var pods []corev1.Pod
	waitFor(t, "the Deployment's 2 pods scheduled and Running", func(ctx context.Context) bool {
		pods = running(ctx, t, cs)
		return len(pods) == 2
	})
	failed := pods[0].Spec.NodeName
	t.Logf("pods on %s and %s", pods[0].Spec.NodeName, pods[1].Spec.NodeName)

	// A node failure: the node-lifecycle controller marks the node NotReady
	// and evicts its pods; the ReplicaSet replaces them on the others.
	c.StopNode(failed)
	waitFor(t, "the pod on the failed node "+failed+" evicted and replaced elsewhere", func(ctx context.Context) bool {
		evicted, err := cs.CoreV1().Pods("default").Get(ctx, pods[0].Name, metav1.GetOptions{})
		gone := apierrors.IsNotFound(err) || (err == nil && evicted.DeletionTimestamp != nil)
		now := running(ctx, t, cs)
		for _, p := range now {
			if p.Spec.NodeName == failed {
				return false
			}
		}
		return gone && len(now) == 2
	})
	// Back again, its kubelet finishes deleting the evicted pod.
	c.StartNode(failed)

	// Deleting the owner: the garbage collector deletes the Deployment,
	// then its ReplicaSet and pods (envtest runs no garbage collector).
	if err := cs.CoreV1().ConfigMaps("default").Delete(ctx, "shop", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the Deployment and all its pods garbage-collected", func(ctx context.Context) bool {
		_, err := cs.AppsV1().Deployments("default").Get(ctx, "shop", metav1.GetOptions{})
		left, listErr := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=shop"})
		return apierrors.IsNotFound(err) && listErr == nil && len(left.Items) == 0
	})
}

// runController runs the controller against the cluster until the test
// ends (stopped before the cluster is deleted: cleanups run last first).
func runController(t *testing.T, c *kubesimtest.Cluster) {
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	mgr, err := ctrl.NewManager(c.Config(), ctrl.Options{
		Metrics: metricsserver.Options{BindAddress: "0"}, // no listener: tests may run side by side
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("controller: %v", err)
		}
	})
}

// running lists the Deployment's pods that are scheduled, Running and not
// being deleted.
func running(ctx context.Context, t *testing.T, cs kubernetes.Interface) []corev1.Pod {
	list, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=shop"})
	if err != nil {
		t.Logf("listing pods: %v", err)
		return nil
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.Spec.NodeName != "" && p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// waitFor polls done until it holds, failing the test after a minute.
func waitFor(t *testing.T, what string, done func(ctx context.Context) bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, time.Minute, true,
		func(ctx context.Context) (bool, error) { return done(ctx), nil })
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}
