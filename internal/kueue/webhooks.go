package kueue

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/credentials"
)

// The names upstream's manifests get (its kustomization's prefix).
const (
	mutatingName   = "kueue-mutating-webhook-configuration"
	validatingName = "kueue-validating-webhook-configuration"
)

// convertedCRDs are the CRDs that serve v1beta1 beside v1beta2, converted
// by Kueue's webhook.
var convertedCRDs = []string{"workloads", "localqueues", "clusterqueues", "cohorts", "multikueueclusters"}

// ready passes once Kueue's webhooks serve (its readyz).
func ready(ctx context.Context, _ clusterdir.Dir, c *v1alpha1.Cluster) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+loopbackPort(c, healthPort)+"/readyz", nil)
	if err != nil {
		return err
	}
	resp, err := (&http.Client{Timeout: 2 * time.Second}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("kueue's readyz: %s", resp.Status)
	}
	return nil
}

// register points the API server at Kueue's webhooks, by URL on loopback
// trusted through the cluster's CA: the admission webhooks of Kueue's own
// kinds and of batch/v1 Jobs (upstream's, failing closed as upstream's
// do); and its visibility API with the aggregator (the conversion of its
// CRDs' v1beta1 is written at install: conversion). It runs at every start, so a port that moved is
// followed.
func register(ctx context.Context, d clusterdir.Dir, c *v1alpha1.Cluster) error {
	ca, err := os.ReadFile(credentials.CAFile(d))
	if err != nil {
		return err
	}
	cfg, err := credentials.SetupConfig(d, 10*time.Second)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	base := fmt.Sprintf("https://%s", loopbackPort(c, webhookPort))
	mutating, validating, err := webhookConfigurations(base, ca)
	if err != nil {
		return err
	}
	if err := apply(ctx, client.AdmissionregistrationV1().MutatingWebhookConfigurations(), mutating,
		func(cur, want *admissionregistrationv1.MutatingWebhookConfiguration) { cur.Webhooks = want.Webhooks }); err != nil {
		return err
	}
	if err := apply(ctx, client.AdmissionregistrationV1().ValidatingWebhookConfigurations(), validating,
		func(cur, want *admissionregistrationv1.ValidatingWebhookConfiguration) { cur.Webhooks = want.Webhooks }); err != nil {
		return err
	}
	return visibility.Register(ctx, d, c.Status.Ports.Get(ComponentName, visibilityPort))
}

// conversion is the conversion of a Kueue CRD that serves v1beta1 beside
// v1beta2: by Kueue's webhook, on loopback, trusted through the cluster's
// CA. Bootstrap writes it before Kueue starts, at every start, so a port
// that moved is followed.
func conversion(d clusterdir.Dir, c *v1alpha1.Cluster, crd string) (*apiextensionsv1.CustomResourceConversion, error) {
	name, ok := strings.CutSuffix(crd, ".kueue.x-k8s.io")
	if !ok || !slices.Contains(convertedCRDs, name) {
		return nil, nil
	}
	ca, err := os.ReadFile(credentials.CAFile(d))
	if err != nil {
		return nil, err
	}
	url := fmt.Sprintf("https://%s/convert", loopbackPort(c, webhookPort))
	return &apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{
			ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: &url, CABundle: ca},
			ConversionReviewVersions: []string{"v1"},
		},
	}, nil
}

// offered says whether kubesim registers an upstream webhook, by its
// path: those of Kueue's own kinds and of batch/v1 Jobs. The other
// integrations' (pods, Deployments, JobSets …) are not run.
func offered(path string) bool {
	return strings.Contains(path, "-kueue-x-k8s-io-") || strings.HasSuffix(path, "-batch-v1-job")
}

// webhookConfigurations are upstream's two webhook configurations, the
// offered webhooks only, each called at base+path and trusted through ca.
// Jobs in kube-system and in Kueue's namespace are left alone, as
// upstream's kustomization leaves them.
func webhookConfigurations(base string, ca []byte) (*admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	decoder := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(webhookManifests)))
	for {
		doc, err := decoder.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, nil, err
		}
		switch meta.Kind {
		case "MutatingWebhookConfiguration":
			err = yaml.UnmarshalStrict(doc, mutating)
		case "ValidatingWebhookConfiguration":
			err = yaml.UnmarshalStrict(doc, validating)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	jobsOnly := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system", Namespace},
	}}}
	point := func(cc *admissionregistrationv1.WebhookClientConfig) (bool, bool) {
		path := *cc.Service.Path
		url := base + path
		*cc = admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: ca}
		return offered(path), strings.HasSuffix(path, "-batch-v1-job")
	}
	var m []admissionregistrationv1.MutatingWebhook
	for _, w := range mutating.Webhooks {
		if keep, job := point(&w.ClientConfig); keep {
			if job {
				w.NamespaceSelector = jobsOnly
			}
			m = append(m, w)
		}
	}
	var v []admissionregistrationv1.ValidatingWebhook
	for _, w := range validating.Webhooks {
		if keep, job := point(&w.ClientConfig); keep {
			if job {
				w.NamespaceSelector = jobsOnly
			}
			v = append(v, w)
		}
	}
	mutating.ObjectMeta = metav1.ObjectMeta{Name: mutatingName}
	mutating.Webhooks = m
	validating.ObjectMeta = metav1.ObjectMeta{Name: validatingName}
	validating.Webhooks = v
	return mutating, validating, nil
}

// webhookObject is a webhook configuration of either kind.
type webhookObject interface {
	*admissionregistrationv1.MutatingWebhookConfiguration | *admissionregistrationv1.ValidatingWebhookConfiguration
	GetName() string
}

// configs is the client of one kind of webhook configuration.
type configs[T webhookObject] interface {
	Create(context.Context, T, metav1.CreateOptions) (T, error)
	Get(context.Context, string, metav1.GetOptions) (T, error)
	Update(context.Context, T, metav1.UpdateOptions) (T, error)
}

// apply creates want, or brings the existing one's webhooks to it.
func apply[T webhookObject](ctx context.Context, client configs[T], want T, set func(cur, want T)) error {
	_, err := client.Create(ctx, want, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	cur, err := client.Get(ctx, want.GetName(), metav1.GetOptions{})
	if err != nil {
		return err
	}
	set(cur, want)
	_, err = client.Update(ctx, cur, metav1.UpdateOptions{})
	return err
}
