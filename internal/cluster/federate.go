package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesim/kubesim/internal/dpdb"
)

// Federate wires running clusters into one DPDB federation: each gets a
// Secret (kubesim-dpdb/federation) holding, per other cluster, a
// kubeconfig whose identity may only read PodDisruptionBudgets there and
// take lock Leases in its kubesim-dpdb namespace. The clusters' dpdb
// controllers pick the Secret up within seconds.
func (p *Provider) Federate(ctx context.Context, names []string) error {
	if len(names) < 2 {
		return fmt.Errorf("federate: name at least two clusters, e.g. kubesim federate red blue green")
	}
	for i, name := range names {
		if slices.Contains(names[:i], name) {
			return fmt.Errorf("federate: cluster %q is named twice", name)
		}
	}
	kubeconfigs := map[string][]byte{}
	for _, name := range names {
		d, c, err := p.openRunning(name)
		if err != nil {
			return err
		}
		if kubeconfigs[name], err = dpdb.FederationKubeconfig(d, c); err != nil {
			return fmt.Errorf("cluster %s: federation credentials: %w", name, err)
		}
	}
	for _, name := range names {
		data := map[string][]byte{}
		for other, kc := range kubeconfigs {
			if other != name {
				data[other] = kc
			}
		}
		if err := p.writeFederationSecret(ctx, name, data); err != nil {
			return fmt.Errorf("cluster %s: %w", name, err)
		}
	}
	p.logf("Federated %s: each holds kubeconfigs for the others in Secret %s/%s",
		strings.Join(names, ", "), dpdb.DefaultNamespace, dpdb.DefaultFederationSecret)
	return nil
}

func (p *Provider) writeFederationSecret(ctx context.Context, name string, data map[string][]byte) error {
	client, err := p.Client(name)
	if err != nil {
		return err
	}
	secrets := client.CoreV1().Secrets(dpdb.DefaultNamespace)
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: dpdb.DefaultFederationSecret, Namespace: dpdb.DefaultNamespace},
		Data:       data,
	}
	_, err = secrets.Create(ctx, secret, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		_, err = secrets.Update(ctx, secret, metav1.UpdateOptions{})
	}
	return err
}
