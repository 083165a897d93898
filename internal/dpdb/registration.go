package dpdb

import (
	"context"
	"fmt"
	"os"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/credentials"
)

// registerWebhook registers the dpdb controller's eviction webhook
// with the API server, by URL on loopback, trusted through the cluster's
// CA. It fails closed: an eviction it cannot ask about is refused.
func registerWebhook(ctx context.Context, d clusterdir.Dir, c *v1alpha1.Cluster) error {
	ca, err := os.ReadFile(credentials.CAFile(d))
	if err != nil {
		return err
	}
	client, err := credentials.AdminClient(d, 10*time.Second)
	if err != nil {
		return err
	}
	url := webhookURL(c)
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: WebhookName},
		Webhooks:   Webhooks(admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: ca}),
	}
	configs := client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	if _, err := configs.Create(ctx, cfg, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		current, err := configs.Get(ctx, cfg.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		current.Webhooks = cfg.Webhooks
		_, err = configs.Update(ctx, current, metav1.UpdateOptions{})
		return err
	} else if err != nil {
		return err
	}
	return nil
}

// followWebhookPort points a registered webhook at the port the
// controller is about to serve: a moved port would otherwise leave every
// eviction refused. Until the cluster has started — its API server may not
// serve yet, as the controller starts beside it — Setup registers the
// webhook with the port of that moment instead.
func followWebhookPort(d clusterdir.Dir, c *v1alpha1.Cluster) error {
	if _, err := os.Stat(d.StartedFile()); err != nil {
		return nil
	}
	client, err := credentials.AdminClient(d, 5*time.Second)
	if err != nil {
		return err
	}
	ctx := context.Background()
	configs := client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	current, err := configs.Get(ctx, WebhookName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("the dpdb webhook's registration: %w", err)
	}
	url := webhookURL(c)
	changed := false
	for i := range current.Webhooks {
		if u := current.Webhooks[i].ClientConfig.URL; u != nil && *u != url {
			current.Webhooks[i].ClientConfig.URL, changed = &url, true
		}
	}
	if !changed {
		return nil
	}
	_, err = configs.Update(ctx, current, metav1.UpdateOptions{})
	return err
}

func webhookURL(c *v1alpha1.Cluster) string {
	return fmt.Sprintf("https://%s:%d%s", credentials.Loopback, c.Status.Ports.Get(ComponentName, ""), WebhookPath)
}
