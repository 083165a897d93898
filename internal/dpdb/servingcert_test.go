package dpdb

import (
	"bytes"
	"context"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"github.com/kubesim/kubesim/internal/pki"
)

func selfManaged() Options {
	o := DefaultOptions()
	o.WebhookPort, o.WebhookService, o.WebhookConfiguration = 9443, "kubesim-dpdb/dpdb-webhook", "kubesim-dpdb-controller"
	o.WebhookExtraSANs = []string{"127.0.0.1", "webhook.example.com"}
	return o
}

// The certificate made at start verifies, through the CA handed back, for
// the Service's name and each extra SAN, and for nothing else.
func TestServingCertSelfManaged(t *testing.T) {
	o := selfManaged()
	cert, caPEM, err := o.servingCert()
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		t.Fatalf("CA bundle is not PEM: %q", caPEM)
	}
	for host, ok := range map[string]bool{
		"dpdb-webhook.kubesim-dpdb.svc": true, "127.0.0.1": true, "webhook.example.com": true,
		"dpdb-webhook.default.svc": false, "10.0.0.1": false,
	} {
		_, err := cert.Leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
		if (err == nil) != ok {
			t.Errorf("verifying for %s: %v, want ok=%v", host, err, ok)
		}
	}
}

// Given files, the certificate is theirs and no CA is published.
func TestServingCertFromFiles(t *testing.T) {
	dir := t.TempDir()
	ca, err := pki.NewCA("test")
	if err != nil {
		t.Fatal(err)
	}
	kp, err := ca.Issue(pki.CertSpec{CommonName: "webhook", DNSNames: []string{"webhook"}, Server: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := kp.Write(dir, "webhook"); err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.WebhookPort, o.WebhookCertFile, o.WebhookKeyFile = 9443, filepath.Join(dir, "webhook.crt"), filepath.Join(dir, "webhook.key")
	cert, caPEM, err := o.servingCert()
	if err != nil || caPEM != nil || !bytes.Equal(cert.Certificate[0], kp.Cert.Raw) {
		t.Fatalf("servingCert from files: CA %q, err %v", caPEM, err)
	}
	o.WebhookKeyFile = filepath.Join(dir, "missing.key")
	if _, _, err := o.servingCert(); err == nil || !strings.HasPrefix(err.Error(), "--webhook-cert, --webhook-key: ") {
		t.Errorf("a missing key file: %v, want an error naming the flags", err)
	}
}

// setCABundle writes the CA into the dpdb webhooks of the configuration
// and leaves any other webhook alone.
func TestSetCABundle(t *testing.T) {
	ctx := context.Background()
	cc := admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: "kubesim-dpdb", Name: "dpdb-webhook"}}
	other := admissionregistrationv1.ValidatingWebhook{Name: "other.example.com", ClientConfig: admissionregistrationv1.WebhookClientConfig{CABundle: []byte("theirs")}}
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "kubesim-dpdb-controller"},
		Webhooks:   append(Webhooks(cc), other),
	}
	client := fake.NewClientset(cfg, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "foreign"}, Webhooks: []admissionregistrationv1.ValidatingWebhook{other}})
	if err := setCABundle(ctx, client, "kubesim-dpdb-controller", []byte("ca")); err != nil {
		t.Fatal(err)
	}
	got, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, cfg.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range got.Webhooks {
		want := "ca"
		if w.Name == other.Name {
			want = "theirs"
		}
		if string(w.ClientConfig.CABundle) != want {
			t.Errorf("webhook %s: caBundle %q, want %q", w.Name, w.ClientConfig.CABundle, want)
		}
	}
	// Setting it again changes nothing: no write.
	client.ClearActions()
	if err := setCABundle(ctx, client, "kubesim-dpdb-controller", []byte("ca")); err != nil {
		t.Fatal(err)
	}
	for _, a := range client.Actions() {
		if a.GetVerb() != "get" {
			t.Errorf("an unchanged caBundle was written: %s", a.GetVerb())
		}
	}
	for name, want := range map[string]string{
		"foreign": "--webhook-configuration: foreign has no webhook named " + WebhookName,
		"missing": "--webhook-configuration: ",
	} {
		if err := setCABundle(ctx, client, name, []byte("ca")); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("setCABundle(%s): %v, want an error starting %q", name, err, want)
		}
	}
}

// deploy/dpdb registers the same webhooks as kubesim does in its own
// clusters, through the Service the controller makes its certificate for.
func TestDeployedWebhooksMirrorKubesim(t *testing.T) {
	data, err := os.ReadFile("../../deploy/dpdb/webhook.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg *admissionregistrationv1.ValidatingWebhookConfiguration
	for doc := range strings.SplitSeq(string(data), "\n---\n") {
		var obj admissionregistrationv1.ValidatingWebhookConfiguration
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		if obj.Kind == "ValidatingWebhookConfiguration" {
			cfg = &obj
		}
	}
	if cfg == nil {
		t.Fatal("deploy/dpdb/webhook.yaml has no ValidatingWebhookConfiguration")
	}
	o := selfManaged()
	svc := cfg.Webhooks[0].ClientConfig.Service
	if svc == nil || svc.Namespace+"/"+svc.Name != o.WebhookService || cfg.Name != o.WebhookConfiguration ||
		svc.Path == nil || *svc.Path != WebhookPath {
		t.Errorf("webhook %s calls %+v, want the Service %s at %s", cfg.Name, svc, o.WebhookService, WebhookPath)
	}
	if want := Webhooks(cfg.Webhooks[0].ClientConfig); !apiequality.Semantic.DeepEqual(cfg.Webhooks, want) {
		t.Errorf("deploy/dpdb/webhook.yaml's webhooks differ from kubesim's own:\n got %+v\nwant %+v", cfg.Webhooks, want)
	}
}

// A configuration applied after the controller started still gets the CA,
// and the webhook is ready only then.
func TestPublishCAWaitsForConfiguration(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := fake.NewClientset()
	tried := make(chan struct{}, 1)
	client.PrependReactor("get", "validatingwebhookconfigurations", func(clienttesting.Action) (bool, runtime.Object, error) {
		select {
		case tried <- struct{}{}:
		default:
		}
		return false, nil, nil
	})
	o := selfManaged()
	wh := &webhook{opts: o, client: client}
	var ready atomic.Bool
	done := make(chan struct{})
	go func() { wh.publishCA(ctx, []byte("ca"), &ready); close(done) }()
	<-tried // found nothing
	if ready.Load() {
		t.Fatal("ready before the configuration exists")
	}
	cc := admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: "kubesim-dpdb", Name: "dpdb-webhook"}}
	if _, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: o.WebhookConfiguration}, Webhooks: Webhooks(cc)}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the CA not published 10s after the configuration appeared")
	}
	if !ready.Load() {
		t.Error("published, but not ready")
	}
}
