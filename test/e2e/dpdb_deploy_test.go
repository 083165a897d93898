//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	policyv1alpha1 "github.com/kubesim/kubesim/apis/policy/v1alpha1"
)

// What deploy/dpdb/webhook.yaml names.
const (
	deployedWebhooks = "kubesim-dpdb-controller"
	deployedService  = "kubesim-dpdb/dpdb-webhook"
	deployedSvcName  = "dpdb-webhook.kubesim-dpdb.svc"
)

// TestDPDBControllerDeployed runs two replicas of `kubesim dpdb-controller`
// with leader election, as deploy/dpdb does, each with exactly
// the rights deploy/dpdb gives its ServiceAccount (impersonated, as no
// image runs) against a cluster whose own dpdb component is disabled,
// with its eviction webhook registered as deploy/dpdb registers it and
// a certificate it makes and publishes itself.
func TestDPDBControllerDeployed(t *testing.T) {
	e := newEnv(t)
	e.createCluster("dpdbext", "--nodes", "1", "--disable-dpdb-controller")
	if pid := e.componentPID("dpdbext", "dpdb-controller"); pid != 0 {
		t.Fatalf("dpdb-controller runs although disabled (pid %d)", pid)
	}
	e.kubectl("apply", "-k", filepath.Join("..", "..", "deploy", "dpdb"))
	client, dyn := e.client(), dpdbClient(t, e.kubeconfig)
	e.apply(dpdbFor("web", 2, "maxUnavailable: 50%"))
	waitPods(t, client, "app=web", 2)

	// A Service cannot lead to a process on this machine, so the webhooks
	// call the controller on loopback: only their clientConfig changes,
	// from the Service to a URL; everything else is as deployed, the
	// empty caBundle included.
	port := freeLoopbackPort(t)
	webhookToURL(t, client, fmt.Sprintf("https://127.0.0.1:%d", port))

	sa := impersonating(t, filepath.Join(e.clusterDir("dpdbext"), "kubeconfig"), "system:serviceaccount:kubesim-dpdb:dpdb-controller")
	// Two replicas with leader election, as deployed: the first to start
	// leads; the second, on its own port, is a candidate.
	var logs safeBuffer
	startReplica := func(port int, logs io.Writer) *exec.Cmd {
		ctrl := exec.Command(binary, "dpdb-controller", "--kubeconfig", sa, "--cluster-name", "dpdbext",
			"--webhook-port", strconv.Itoa(port), "--webhook-service", deployedService,
			"--webhook-configuration", deployedWebhooks, "--webhook-extra-san", "127.0.0.1", "--leader-elect")
		ctrl.Stdout, ctrl.Stderr = os.Stderr, io.MultiWriter(os.Stderr, logs)
		if err := ctrl.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ctrl.Process.Kill(); _ = ctrl.Wait() })
		return ctrl
	}
	ctrl := startReplica(port, &logs)
	// maxUnavailable 50% of 2 expected pods: 1 required, 1 allowed.
	waitAllowed(t, client, dyn, "default", "web", 1)

	// The controller published its CA itself, in both its webhooks, and
	// serves a certificate for the Service that CA verifies.
	eventually(t, 30*time.Second, "the webhook's CA published and the webhook ready", func() error {
		return webhookTrusted(client, port)
	})

	// The second replica: not the leader, so not ready, and it refuses
	// evictions should the API server reach it.
	standbyPort := freeLoopbackPort(t)
	var standbyLogs safeBuffer
	startReplica(standbyPort, &standbyLogs)
	eventually(t, 30*time.Second, "the second replica serving as a candidate", func() error {
		return wantReadyz(standbyPort, http.StatusServiceUnavailable, "not the leader")
	})
	if h := leaseHolder(t, client); h == "" {
		t.Fatal("the leader's Lease is held by no one")
	}

	// An eviction the federation allows: the webhook admits it (the API
	// server may need a moment to load the new caBundle).
	pods := runningPods(t, client, "app=web")
	eventually(t, 30*time.Second, "evicting "+pods[0].Name+" through the webhook", func() error {
		err := evictPod(client, pods[0].Name)
		if apierrors.IsTooManyRequests(err) {
			t.Fatalf("evicting %s with 1 disruption allowed: %v", pods[0].Name, err)
		}
		return err
	})
	if want := fmt.Sprintf(`"eviction admitted" pod="default/%s"`, pods[0].Name); !strings.Contains(logs.String(), want) {
		t.Errorf("the controller's log lacks %s: the eviction did not go through its webhook", want)
	}

	// One it does not allow: refused by the webhook, with its message.
	waitPods(t, client, "app=web", 2)
	if _, err := dyn.Resource(policyv1alpha1.Resource).Namespace("default").Patch(context.Background(), "web", types.MergePatchType,
		[]byte(`{"spec":{"maxUnavailable":null,"minAvailable":2}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitAllowed(t, client, dyn, "default", "web", 0)
	pods = runningPods(t, client, "app=web")
	// The first eviction's lock may still be held (until the controller
	// sees that pod go, or for at most its timeout): "busy; retry" first.
	eventually(t, 30*time.Second, "the webhook refusing "+pods[0].Name+" as no disruption is allowed", func() error {
		err := evictPod(client, pods[0].Name)
		switch {
		case apierrors.IsTooManyRequests(err) && strings.Contains(err.Error(), "federation allows no disruption"):
			return nil
		case apierrors.IsTooManyRequests(err) && strings.Contains(err.Error(), "lock is busy"):
			return err
		}
		t.Fatalf("evicting %s with none allowed: %v, want the webhook's refusal (429)", pods[0].Name, err)
		return nil
	})
	// The opt-in DELETE webhook is deployed too.
	e.kubectl("label", "pod", pods[0].Name, "policy.kubesim.io/guard-delete=true")
	err := client.CoreV1().Pods("default").Delete(context.Background(), pods[0].Name, metav1.DeleteOptions{})
	if err == nil || !strings.Contains(err.Error(), "federation allows no disruption") {
		t.Errorf("deleting guarded %s with none allowed: %v, want the webhook's refusal", pods[0].Name, err)
	}

	// The leader stops (a deleted pod: it releases the Lease); the
	// candidate leads, publishes its own CA, becomes ready and decides.
	if err := ctrl.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the second replica leading and ready", func() error {
		return webhookTrusted(client, standbyPort)
	})
	webhookToURL(t, client, fmt.Sprintf("https://127.0.0.1:%d", standbyPort))
	eventually(t, 30*time.Second, "the new leader refusing "+pods[1].Name+" as no disruption is allowed", func() error {
		err := evictPod(client, pods[1].Name)
		if apierrors.IsTooManyRequests(err) && strings.Contains(err.Error(), "federation allows no disruption") {
			return nil
		}
		return fmt.Errorf("evicting %s: %v", pods[1].Name, err)
	})

	// The ServiceAccount can do what the controller needs, nothing more.
	ctx := context.Background()
	other := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "someone-elses"}}
	if _, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	saClient := clientsetFor(t, mustConfig(t, sa))
	for what, err := range map[string]error{
		"list pods":    listErr(saClient.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})),
		"delete a PDB": saClient.PolicyV1().PodDisruptionBudgets("default").Delete(ctx, "web", metav1.DeleteOptions{}),
		"patch another webhook configuration": listErr(saClient.AdmissionregistrationV1().ValidatingWebhookConfigurations().Patch(ctx,
			other.Name, types.MergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`), metav1.PatchOptions{})),
	} {
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s as the controller's ServiceAccount: %v, want 403", what, err)
		}
	}
}

// wantReadyz checks a replica's /readyz answer (any certificate: only
// the leader's CA is published).
func wantReadyz(port, code int, body string) error {
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}}} //nolint:gosec // a probe of a local test process
	resp, err := hc.Get(fmt.Sprintf("https://127.0.0.1:%d/readyz", port))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != code || !strings.Contains(string(got), body) {
		return fmt.Errorf("/readyz: %s %q, want %d %q", resp.Status, got, code, body)
	}
	return nil
}

// leaseHolder is who holds the dpdb controller's leader Lease.
func leaseHolder(t *testing.T, client kubernetes.Interface) string {
	t.Helper()
	l, err := client.CoordinationV1().Leases("kubesim-dpdb").Get(context.Background(), "dpdb-controller", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

func evictPod(client kubernetes.Interface, name string) error {
	return client.PolicyV1().Evictions("default").Evict(context.Background(), &policyv1.Eviction{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}})
}

// freeLoopbackPort is a loopback port free a moment ago.
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// webhookToURL points the deployed webhooks at base plus their Service path.
func webhookToURL(t *testing.T, client kubernetes.Interface, base string) {
	t.Helper()
	configs := client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	cfg, err := configs.Get(context.Background(), deployedWebhooks, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range cfg.Webhooks {
		cc := &cfg.Webhooks[i].ClientConfig
		path := "/evict" // as deployed, when already moved to a URL
		if cc.Service != nil && cc.Service.Path != nil {
			path = *cc.Service.Path
		}
		url := base + path
		cc.URL, cc.Service = &url, nil
	}
	if _, err := configs.Update(context.Background(), cfg, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// webhookTrusted checks that every deployed webhook carries a caBundle
// that verifies the controller's certificate for the Service's name, and
// that the controller says it is ready.
func webhookTrusted(client kubernetes.Interface, port int) error {
	cfg, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(context.Background(), deployedWebhooks, metav1.GetOptions{})
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	for _, w := range cfg.Webhooks {
		if !roots.AppendCertsFromPEM(w.ClientConfig.CABundle) {
			return fmt.Errorf("webhook %s: no CA in its caBundle", w.Name)
		}
	}
	tlsConfig := &tls.Config{RootCAs: roots, ServerName: deployedSvcName, MinVersion: tls.VersionTLS12}
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConfig}}
	resp, err := hc.Get(fmt.Sprintf("https://127.0.0.1:%d/readyz", port))
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/readyz: %s", resp.Status)
	}
	return nil
}
