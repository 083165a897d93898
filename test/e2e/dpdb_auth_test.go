//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

// TestDPDBWebhookServesOnlyAPIServer: the dpdb webhook's port refuses, in
// the TLS handshake, a caller with no client certificate and one with a
// certificate of the cluster's CA that is not the API server's (the
// admin's); evictions through the API server are still decided by it.
func TestDPDBWebhookServesOnlyAPIServer(t *testing.T) {
	e := newEnv(t)
	e.createCluster("dpdbauth", "--nodes", "1")
	client, dyn := e.client(), dpdbClient(t, e.kubeconfig)
	dir := e.clusterDir("dpdbauth")
	config, err := os.ReadFile(filepath.Join(dir, "cluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cluster v1alpha1.Cluster
	if err := yaml.Unmarshal(config, &cluster); err != nil || cluster.Status == nil {
		t.Fatalf("cluster.yaml: %v", err)
	}
	port := cluster.Status.Ports.Get("dpdb-controller", "")
	if port == 0 {
		t.Fatalf("no dpdb-controller port in cluster.yaml:\n%s", config)
	}
	caPEM, err := os.ReadFile(filepath.Join(dir, "pki", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	admin := mustConfig(t, e.kubeconfig)
	adminCert, err := tls.X509KeyPair(admin.CertData, admin.KeyData)
	if err != nil {
		t.Fatal(err)
	}
	review := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"1","namespace":"default","name":"web-0",` +
		`"operation":"CREATE","subResource":"eviction","kind":{"group":"policy","version":"v1","kind":"Eviction"}}}`
	for name, certs := range map[string][]tls.Certificate{"anonymous": nil, "the admin's certificate": {adminCert}} {
		hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: certs, MinVersion: tls.VersionTLS12}}}
		resp, err := hc.Post(fmt.Sprintf("https://127.0.0.1:%d/evict", port), "application/json", strings.NewReader(review))
		if err == nil {
			resp.Body.Close()
			t.Errorf("%s POST /evict: %s, want refused at TLS", name, resp.Status)
		} else if !strings.Contains(err.Error(), "tls") {
			t.Errorf("%s POST /evict: %v, want a TLS refusal", name, err)
		}
	}

	// The API server's calls are still answered: the webhook refuses an
	// eviction over budget, then admits one within it.
	e.apply(dpdbFor("web", 2, "minAvailable: 2"))
	waitPods(t, client, "app=web", 2)
	waitAllowed(t, client, dyn, "default", "web", 0)
	pod := runningPods(t, client, "app=web")[0]
	evict := func() error {
		return client.PolicyV1().Evictions("default").Evict(context.Background(), &policyv1.Eviction{
			ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: "default"}})
	}
	if err := evict(); !apierrors.IsTooManyRequests(err) || !strings.Contains(err.Error(), "eviction.dpdb.policy.kubesim.io") ||
		!strings.Contains(err.Error(), "federation allows no disruption") {
		t.Errorf("evicting over budget: %v, want the webhook's 429", err)
	}
	e.kubectl("patch", "dpdb", "web", "--type=merge", "-p", `{"spec":{"minAvailable":1}}`)
	waitAllowed(t, client, dyn, "default", "web", 1)
	eventually(t, 30*time.Second, "an eviction admitted by the webhook", evict)
}
