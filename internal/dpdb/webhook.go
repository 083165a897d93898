package dpdb

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/kubesim/kubesim/internal/admissionreview"
	"github.com/kubesim/kubesim/internal/clusterclock"
)

// The eviction webhook, as registered with the API server.
const (
	WebhookName = "eviction.dpdb.policy.kubesim.io"
	// DeleteWebhookName checks pod deletions too, for pods that carry
	// GuardDeleteLabel=true.
	DeleteWebhookName = "delete.dpdb.policy.kubesim.io"
	GuardDeleteLabel  = "policy.kubesim.io/guard-delete"
	WebhookPath       = "/evict"
	// holdTimeout bounds how long an admitted eviction keeps the lock
	// waiting for its child PDB to count the pod out.
	holdTimeout = 5 * time.Second
)

// Webhooks are the controller's webhooks as the API server should call
// them, through cc. Both fail closed: an eviction that cannot be checked
// is refused. deploy/dpdb/webhook.yaml carries the same.
func Webhooks(cc admissionregistrationv1.WebhookClientConfig) []admissionregistrationv1.ValidatingWebhook {
	webhook := func(name string, op admissionregistrationv1.OperationType, resource string) admissionregistrationv1.ValidatingWebhook {
		return admissionregistrationv1.ValidatingWebhook{
			Name:         name,
			ClientConfig: cc,
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{op},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"},
					Resources: []string{resource}, Scope: ptr.To(admissionregistrationv1.NamespacedScope)},
			}},
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			MatchPolicy:             ptr.To(admissionregistrationv1.Equivalent),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNoneOnDryRun),
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To[int32](10),
		}
	}
	evict := webhook(WebhookName, admissionregistrationv1.Create, "pods/eviction")
	// Deleting a pod skips PDBs; pods labelled for it opt in.
	del := webhook(DeleteWebhookName, admissionregistrationv1.Delete, "pods")
	del.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{GuardDeleteLabel: "true"}}
	return []admissionregistrationv1.ValidatingWebhook{evict, del}
}

// ReadyPath answers 200 once the API server can trust the webhook (its
// CA published, when the controller made its own certificate).
const ReadyPath = "/readyz"

// webhook answers the API server's reviews of evictions, and of deletions
// of pods that opt in, for the pods DPDBs cover. It shares the
// controller's DPDB cache and remote clusters, and decides nothing until
// the controller has caught up.
type webhook struct {
	opts    Options
	client  kubernetes.Interface // this cluster's
	dpdbs   cache.Indexer        // the controller's typed DPDBs
	members memberClients
	// caughtUp is closed once dpdbs and members are current.
	caughtUp <-chan struct{}
	// leader says whether this replica leads: only the leader admits.
	leader *leadership
}

// memberClients gives the client of another cluster of the federation, or
// nil and why it cannot be used now.
type memberClients interface {
	client(cluster string) (kubernetes.Interface, string)
}

// serve serves the eviction webhook on WebhookAddress until ctx ends.
func (wh *webhook) serve(ctx context.Context) error {
	cert, caPEM, err := wh.opts.servingCert()
	if err != nil {
		return err
	}
	tlsConfig, err := wh.opts.webhookTLS(cert)
	if err != nil {
		return err
	}
	var ready atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc(WebhookPath, wh.handleEviction)
	// Only the leader is ready: a Service sends the API server's calls to
	// ready pods only, so they reach the one replica that admits.
	mux.HandleFunc(ReadyPath, func(w http.ResponseWriter, _ *http.Request) {
		switch {
		case !wh.leader.leading():
			http.Error(w, "not the leader", http.StatusServiceUnavailable)
		case !ready.Load():
			http.Error(w, "the webhook's CA is not published yet", http.StatusServiceUnavailable)
		}
	})
	srv := &http.Server{
		Handler:           mux,
		TLSConfig:         tlsConfig,
		ReadHeaderTimeout: clusterclock.Stretch(5 * time.Second), // real time on a scaled clock
	}
	l, err := net.Listen("tcp", net.JoinHostPort(wh.opts.WebhookAddress, strconv.Itoa(wh.opts.WebhookPort)))
	if err != nil {
		return fmt.Errorf("--webhook-address, --webhook-port: %w", err)
	}
	// Listening first: the API server calls as soon as it trusts the CA.
	// Each replica makes its own CA: the leader's alone is published.
	if caPEM != nil {
		go func() {
			select {
			case <-wh.leader.won():
				wh.publishCA(ctx, caPEM, &ready)
			case <-ctx.Done():
			}
		}()
	} else {
		ready.Store(true)
	}
	go func() { <-ctx.Done(); _ = srv.Close() }()
	if err := srv.ServeTLS(l, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// webhookTLS is the webhook's TLS configuration: serving cert and, with
// WebhookClientCA, requiring a client certificate of that CA for
// WebhookClientUser — the API server's — so that no other process can
// ask for evictions and take the federation's lock. A caller without one
// is refused in the handshake.
func (o *Options) webhookTLS(cert tls.Certificate) (*tls.Config, error) {
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if o.WebhookClientCA == "" {
		return cfg, nil
	}
	caPEM, err := os.ReadFile(o.WebhookClientCA)
	if err != nil {
		return nil, fmt.Errorf("--webhook-client-ca: %w", err)
	}
	cas := x509.NewCertPool()
	if !cas.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("--webhook-client-ca: %s holds no PEM certificate", o.WebhookClientCA)
	}
	cfg.ClientAuth, cfg.ClientCAs = tls.RequireAndVerifyClientCert, cas
	user := o.WebhookClientUser
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("no client certificate")
		}
		if cn := cs.PeerCertificates[0].Subject.CommonName; cn != user {
			return fmt.Errorf("client %q is not the API server (%q)", cn, user)
		}
		return nil
	}
	return cfg, nil
}

func (wh *webhook) handleEviction(w http.ResponseWriter, r *http.Request) {
	admissionreview.Serve(w, r, func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		resp := &admissionv1.AdmissionResponse{Allowed: true}
		evicting := req.SubResource == "eviction" && req.Operation == admissionv1.Create
		deleting := req.SubResource == "" && req.Operation == admissionv1.Delete && req.Kind.Kind == "Pod"
		if !evicting && !deleting {
			return resp
		}
		v := allow
		if !wh.leader.leading() {
			v = refuse(notLeader(wh.opts.LeaderElectionIdentity))
		}
		if v.allowed {
			v = wh.waitCaughtUp(r.Context())
		}
		if v.allowed {
			v = wh.admitEviction(r.Context(), req.Namespace, req.Name, req.DryRun != nil && *req.DryRun)
		}
		if !v.allowed {
			resp.Allowed = false
			resp.Result = &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusTooManyRequests,
				Reason: metav1.StatusReasonTooManyRequests, Message: v.reason}
		}
		return resp
	})
}

// caughtUpWait bounds how long an admission waits for a starting
// controller, well inside the webhook's 10s timeout.
const caughtUpWait = 5 * time.Second

// waitCaughtUp waits until the controller knows the DPDBs and the
// clusters; it refuses if it does not in time.
func (wh *webhook) waitCaughtUp(ctx context.Context) verdict {
	select {
	case <-wh.caughtUp:
		return allow
	case <-ctx.Done():
	case <-time.After(caughtUpWait):
	}
	return refuse("the DistributedPodDisruptionBudget controller is still starting; try again")
}
