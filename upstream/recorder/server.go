package recorder

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/spf13/pflag"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"

	"github.com/kubesim/kubesim/upstream/clock"
	"github.com/kubesim/kubesim/upstream/record"
)

// DefaultPods is how many pods' last attempt the scheduler keeps unless
// told (v1alpha1.DefaultExplainPods, which a test holds it to).
const DefaultPods = 1000

// Options configure recording in kube-scheduler and the endpoint that
// serves the records (`kubesim component kube-scheduler --explain-…`).
type Options struct {
	// Pods is how many pods' last attempt to keep; 0 records nothing.
	Pods int
	// Port is the loopback port of the endpoint; 0 serves none.
	Port     int
	CertFile string
	KeyFile  string
	// ClientCAFile verifies clients: the cluster's CA.
	ClientCAFile string
}

// AddFlags binds the options to flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.IntVar(&o.Pods, "explain-pods", o.Pods, "kubesim: keep the last scheduling attempt of this many pods for `kubesim explain` (0: record nothing)")
	fs.IntVar(&o.Port, "explain-port", o.Port, "kubesim: loopback port serving the recorded attempts (0: none)")
	fs.StringVar(&o.CertFile, "explain-cert", o.CertFile, "kubesim: serving certificate of the explain endpoint")
	fs.StringVar(&o.KeyFile, "explain-key", o.KeyFile, "kubesim: serving key of the explain endpoint")
	fs.StringVar(&o.ClientCAFile, "explain-client-ca", o.ClientCAFile, "kubesim: CA that signs the explain endpoint's clients' certificates")
}

// Validate checks the options; each error names its flag.
func (o *Options) Validate() error {
	if o.Pods < 0 {
		return fmt.Errorf("--explain-pods: must be 0 or more, got %d", o.Pods)
	}
	if o.Port < 0 || o.Port > 65535 {
		return fmt.Errorf("--explain-port: %d is not a port (1-65535, or 0 for none)", o.Port)
	}
	if o.Port != 0 && (o.CertFile == "" || o.KeyFile == "" || o.ClientCAFile == "") {
		return errors.New("--explain-cert, --explain-key and --explain-client-ca: required with --explain-port")
	}
	return nil
}

// Serve serves the recorder's attempts on loopback until ctx ends. A client
// must present a certificate of the cluster's CA whose user may get the
// pod it asks about; the API server decides that (SubjectAccessReview).
func Serve(ctx context.Context, o Options, r *Recorder, client kubernetes.Interface, nodes corelisters.NodeLister) error {
	cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
	if err != nil {
		return fmt.Errorf("--explain-cert, --explain-key: %w", err)
	}
	caPEM, err := os.ReadFile(o.ClientCAFile)
	if err != nil {
		return fmt.Errorf("--explain-client-ca: %w", err)
	}
	cas := x509.NewCertPool()
	if !cas.AppendCertsFromPEM(caPEM) {
		return fmt.Errorf("--explain-client-ca: %s holds no PEM certificate", o.ClientCAFile)
	}
	h := &handler{recorder: r, client: client, nodes: nodes}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+podPath, h.explainPod)
	srv := &http.Server{
		Handler: mux,
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{cert},
			ClientAuth:   tls.RequireAndVerifyClientCert,
			ClientCAs:    cas,
			MinVersion:   tls.VersionTLS12,
		},
		ReadHeaderTimeout: clock.Stretch(5 * time.Second), // real time on a scaled clock
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(o.Port)))
	if err != nil {
		return fmt.Errorf("--explain-port: %w", err)
	}
	go func() { <-ctx.Done(); _ = srv.Close() }()
	klog.InfoS("Serving scheduling explanations", "address", l.Addr())
	if err := srv.ServeTLS(l, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// podPath is where one pod's explanation is served.
const podPath = "/v1/namespaces/{namespace}/pods/{name}"

type handler struct {
	recorder *Recorder
	client   kubernetes.Interface
	nodes    corelisters.NodeLister
}

func (h *handler) explainPod(w http.ResponseWriter, r *http.Request) {
	namespace, name := r.PathValue("namespace"), r.PathValue("name")
	if err := h.authorize(r, namespace, name); err != nil {
		writeJSON(w, http.StatusForbidden, record.Problem{Reason: record.Forbidden, Message: err.Error()})
		return
	}
	var allNodes []string
	if list, err := h.nodes.List(labels.Everything()); err == nil {
		for _, n := range list {
			allNodes = append(allNodes, n.Name)
		}
	}
	e, ok := h.recorder.Explain(namespace, name, allNodes)
	if !ok {
		writeJSON(w, http.StatusNotFound, record.Problem{Reason: record.NotRecorded,
			Message: fmt.Sprintf("the scheduler keeps no attempt of pod %s/%s", namespace, name)})
		return
	}
	writeJSON(w, http.StatusOK, e)
}

// authorize asks the API server whether the client certificate's user —
// its common name, its organisations the groups, as the API server reads
// certificates — may get the pod.
func (h *handler) authorize(r *http.Request, namespace, name string) error {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return errors.New("no client certificate")
	}
	subject := r.TLS.PeerCertificates[0].Subject
	review, err := h.client.AuthorizationV1().SubjectAccessReviews().Create(r.Context(), &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{
			User:   subject.CommonName,
			Groups: subject.Organization,
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: namespace, Verb: "get", Resource: "pods", Name: name,
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("asking the API server whether %q may get pods: %w", subject.CommonName, err)
	}
	if !review.Status.Allowed {
		return fmt.Errorf("user %q may not get pod %s/%s", subject.CommonName, namespace, name)
	}
	return nil
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
