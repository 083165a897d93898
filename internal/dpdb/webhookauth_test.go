package dpdb

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubesim/kubesim/internal/credentials"
	"github.com/kubesim/kubesim/internal/pki"
)

// With --webhook-client-ca the webhook serves only the API server: a
// caller with no certificate, with one of another CA or of another name is
// refused in the handshake; the API server's certificate is served.
func TestWebhookRequiresAPIServerCert(t *testing.T) {
	ca, err := pki.NewCA("cluster")
	if err != nil {
		t.Fatal(err)
	}
	other, err := pki.NewCA("other")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	o := DefaultOptions()
	o.WebhookClientCA = filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(o.WebhookClientCA, ca.CertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	serving := issueTLS(t, ca, pki.CertSpec{CommonName: "webhook", IPs: []net.IP{net.ParseIP("127.0.0.1")}, Server: true})
	cfg, err := o.webhookTLS(serving)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.TLS = cfg
	srv.StartTLS()
	defer srv.Close()

	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	client := func(certs ...tls.Certificate) *http.Client {
		return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: certs, MinVersion: tls.VersionTLS12}}}
	}
	apiServer := pki.CertSpec{CommonName: credentials.APIServerWebhookClientUser, Client: true}
	for name, c := range map[string]*http.Client{
		"no certificate":        client(),
		"another CA's":          client(issueTLS(t, other, apiServer)),
		"another user's":        client(issueTLS(t, ca, pki.CertSpec{CommonName: "kubesim-admin", Client: true})),
		"a serving certificate": client(serving),
	} {
		resp, err := c.Post(srv.URL+WebhookPath, "application/json", strings.NewReader("{}"))
		if err == nil {
			resp.Body.Close()
			t.Errorf("%s: served (%s), want refused at TLS", name, resp.Status)
		}
	}
	resp, err := client(issueTLS(t, ca, apiServer)).Post(srv.URL+WebhookPath, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatalf("the API server's certificate: %v, want served", err)
	}
	resp.Body.Close()
}

// Without --webhook-client-ca (deploy/dpdb) anyone is served, as before.
func TestWebhookWithoutClientCA(t *testing.T) {
	o := DefaultOptions()
	cfg, err := o.webhookTLS(tls.Certificate{})
	if err != nil || cfg.ClientAuth != tls.NoClientCert || cfg.VerifyConnection != nil {
		t.Errorf("webhookTLS: %+v, %v; want no client authentication", cfg, err)
	}
	o.WebhookClientCA = filepath.Join(t.TempDir(), "missing.crt")
	if _, err := o.webhookTLS(tls.Certificate{}); err == nil || !strings.Contains(err.Error(), "--webhook-client-ca") {
		t.Errorf("missing CA file: %v, want an error naming --webhook-client-ca", err)
	}
}

func issueTLS(t *testing.T, ca *pki.KeyPair, spec pki.CertSpec) tls.Certificate {
	t.Helper()
	kp, err := ca.Issue(spec)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{kp.Cert.Raw}, PrivateKey: kp.Key, Leaf: kp.Cert}
}
