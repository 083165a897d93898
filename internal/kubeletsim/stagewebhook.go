package kubeletsim

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"k8s.io/utils/ptr"

	kubesimv1alpha1 "github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/apis/kwok/v1alpha1"
	"github.com/kubesim/kubesim/internal/admissionreview"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/credentials"
	"github.com/kubesim/kubesim/internal/pki"
)

// In a kubesim cluster the supervisor serves the Stage author check
// (stageauthor.go) as a validating webhook: on a loopback port of the
// moment, with a certificate of the cluster's CA made in memory, to the
// API server alone (its webhook client certificate). It is registered, or
// pointed at the port anew, each time the cluster starts, before anyone
// else can reach the API server; it fails closed, so while it cannot be
// asked no Stage is created or changed.

// StageWebhookName is the ValidatingWebhookConfiguration of the check.
const StageWebhookName = "kubesim-stage-authors"

const stageWebhookPath = "/stages"

// stageWebhook is this supervisor's one server of the check.
var stageWebhook struct {
	sync.Mutex
	url string
}

// setUpStageWebhook serves the check until ctx ends (once per process)
// and registers it with the API server.
func setUpStageWebhook(ctx context.Context, d clusterdir.Dir, _ *kubesimv1alpha1.Cluster) error {
	stageWebhook.Lock()
	defer stageWebhook.Unlock()
	if stageWebhook.url == "" {
		url, err := serveStageWebhook(ctx, d)
		if err != nil {
			return err
		}
		stageWebhook.url = url
	}
	return registerStageWebhook(ctx, d, stageWebhook.url)
}

// serveStageWebhook starts the server and returns its URL.
func serveStageWebhook(ctx context.Context, d clusterdir.Dir) (string, error) {
	ca, err := pki.Load(d.PKI(), credentials.CA)
	if err != nil {
		return "", fmt.Errorf("the Stage author check: %w", err)
	}
	kp, err := ca.Issue(pki.CertSpec{CommonName: StageWebhookName, IPs: []net.IP{net.ParseIP(credentials.Loopback)}, Server: true})
	if err != nil {
		return "", err
	}
	cas := x509.NewCertPool()
	cas.AddCert(ca.Cert)
	tlsConfig := &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{kp.Cert.Raw}, PrivateKey: kp.Key, Leaf: kp.Cert}},
		MinVersion:   tls.VersionTLS12,
		ClientAuth:   tls.RequireAndVerifyClientCert, ClientCAs: cas,
		// Only the API server asks: another caller could learn what any
		// user may do.
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 || cs.PeerCertificates[0].Subject.CommonName != credentials.APIServerWebhookClientUser {
				return errors.New("only the API server may ask")
			}
			return nil
		},
	}
	cfg, err := credentials.AdminConfig(d)
	if err != nil {
		return "", err
	}
	client, err1 := kubernetes.NewForConfig(cfg)
	disc, err2 := discovery.NewDiscoveryClientForConfig(cfg)
	if err := errors.Join(err1, err2); err != nil {
		return "", err
	}
	h := &stageAuthorHandler{client: client, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))}
	mux := http.NewServeMux()
	mux.Handle(stageWebhookPath, h)
	l, err := net.Listen("tcp", net.JoinHostPort(credentials.Loopback, "0"))
	if err != nil {
		return "", fmt.Errorf("the Stage author check: %w", err)
	}
	srv := &http.Server{Handler: mux, TLSConfig: tlsConfig, ReadHeaderTimeout: 5 * time.Second}
	go func() { <-ctx.Done(); _ = srv.Close() }()
	go func() { _ = srv.ServeTLS(l, "", "") }()
	return "https://" + l.Addr().String() + stageWebhookPath, nil
}

// registerStageWebhook creates the check's configuration, or points it at url.
func registerStageWebhook(ctx context.Context, d clusterdir.Dir, url string) error {
	client, err := credentials.AdminClient(d, 10*time.Second)
	if err != nil {
		return err
	}
	ca, err := pki.Load(d.PKI(), credentials.CA)
	if err != nil {
		return err
	}
	want := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: StageWebhookName},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:         "authors.stages.kubesim.io",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: ca.CertPEM()},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{v1alpha1.GroupName}, APIVersions: []string{"*"},
					Resources: []string{v1alpha1.StagesResource.Resource}, Scope: ptr.To(admissionregistrationv1.ClusterScope)},
			}},
			// system:masters holds every right: nothing to ask. So the
			// Stages of the cluster's files, which bootstrap makes before
			// this check is served again at a start, are never stopped by
			// it.
			MatchConditions: []admissionregistrationv1.MatchCondition{{
				Name: "not-system-masters", Expression: "!('system:masters' in request.userInfo.groups)"}},
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			MatchPolicy:             ptr.To(admissionregistrationv1.Equivalent),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To[int32](10),
		}},
	}
	configs := client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	current, err := configs.Get(ctx, StageWebhookName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = configs.Create(ctx, want, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	current.Webhooks = want.Webhooks
	_, err = configs.Update(ctx, current, metav1.UpdateOptions{})
	return err
}

// stageAuthorHandler answers the API server's reviews of Stages.
type stageAuthorHandler struct {
	client kubernetes.Interface
	mapper meta.ResettableRESTMapper
}

func (h *stageAuthorHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	admissionreview.Serve(w, r, func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		resp := &admissionv1.AdmissionResponse{Allowed: true}
		if why, err := h.review(r.Context(), req); err != nil {
			resp.Allowed, resp.Result = false, &metav1.Status{Code: http.StatusInternalServerError, Message: err.Error()}
		} else if why != "" {
			resp.Allowed, resp.Result = false, &metav1.Status{Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden, Message: why}
		}
		return resp
	})
}

// review says why req's author may not make the Stage it carries.
func (h *stageAuthorHandler) review(ctx context.Context, req *admissionv1.AdmissionRequest) (string, error) {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return "", nil
	}
	s := &v1alpha1.Stage{}
	if err := json.Unmarshal(req.Object.Raw, s); err != nil {
		return "", nil // the API server's own validation answers for it
	}
	if req.Operation == admissionv1.Update {
		old := &v1alpha1.Stage{}
		if json.Unmarshal(req.OldObject.Raw, old) == nil && equality.Semantic.DeepEqual(old.Spec, s.Spec) {
			return "", nil // labels, annotations: the simulator does nothing new
		}
	}
	return authorRefusal(ctx, h.client.AuthorizationV1().SubjectAccessReviews(), h.mapper, s, req.UserInfo)
}
