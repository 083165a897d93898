package dpdb

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"

	"github.com/kubesim/kubesim/internal/pki"
)

// servingCert is the webhook's certificate: loaded from the files given,
// or made now (with its CA, both in memory only) for the Service the API
// server calls through. caPEM is empty for loaded files: whoever made
// them publishes their CA.
func (o *Options) servingCert() (cert tls.Certificate, caPEM []byte, err error) {
	if o.WebhookCertFile != "" {
		cert, err = tls.LoadX509KeyPair(o.WebhookCertFile, o.WebhookKeyFile)
		if err != nil {
			return cert, nil, fmt.Errorf("--webhook-cert, --webhook-key: %w", err)
		}
		return cert, nil, nil
	}
	ns, name, _ := strings.Cut(o.WebhookService, "/")
	spec := pki.CertSpec{CommonName: name + "." + ns + ".svc", DNSNames: []string{name + "." + ns + ".svc"}, Server: true}
	for _, san := range o.WebhookExtraSANs {
		if ip := net.ParseIP(san); ip != nil {
			spec.IPs = append(spec.IPs, ip)
		} else {
			spec.DNSNames = append(spec.DNSNames, san)
		}
	}
	ca, err := pki.NewCA("kubesim-dpdb-webhook-ca")
	if err != nil {
		return cert, nil, err
	}
	kp, err := ca.Issue(spec)
	if err != nil {
		return cert, nil, err
	}
	cert = tls.Certificate{Certificate: [][]byte{kp.Cert.Raw}, PrivateKey: kp.Key, Leaf: kp.Cert}
	return cert, ca.CertPEM(), nil
}

// setCABundle writes caPEM into the caBundle of the dpdb webhooks (and no
// other) of the ValidatingWebhookConfiguration name. It fails if there is
// none, since the API server could then never trust the webhook.
func setCABundle(ctx context.Context, client kubernetes.Interface, name string, caPEM []byte) error {
	configs := client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cfg, err := configs.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("--webhook-configuration: %w", err)
		}
		own, changed := 0, false
		for i := range cfg.Webhooks {
			w := &cfg.Webhooks[i]
			if !slices.Contains([]string{WebhookName, DeleteWebhookName}, w.Name) {
				continue
			}
			own++
			if !bytes.Equal(w.ClientConfig.CABundle, caPEM) {
				w.ClientConfig.CABundle, changed = caPEM, true
			}
		}
		if own == 0 {
			return fmt.Errorf("--webhook-configuration: %s has no webhook named %s or %s", name, WebhookName, DeleteWebhookName)
		}
		if !changed {
			return nil
		}
		_, err = configs.Update(ctx, cfg, metav1.UpdateOptions{})
		return err
	})
}

// publishCA sets the caBundle, retrying until it is set or ctx ends (the
// configuration may be applied after the controller starts), then marks
// the webhook ready.
func (wh *webhook) publishCA(ctx context.Context, caPEM []byte, ready *atomic.Bool) {
	_ = wait.PollUntilContextCancel(ctx, 2*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := setCABundle(ctx, wh.client, wh.opts.WebhookConfiguration, caPEM); err != nil {
			klog.ErrorS(err, "publishing the webhook's CA; the API server cannot call the webhook, so evictions fail, until it is")
			return false, nil
		}
		klog.InfoS("published the webhook's CA", "validatingWebhookConfiguration", wh.opts.WebhookConfiguration)
		ready.Store(true)
		return true, nil
	})
}
