// Package ui is `kubesim ui`: a local web page of one cluster, live — its
// nodes and pods on a map, the Pending ones with their reasons, and for a
// pod the scheduler's own explanation (package explain, as the CLI shows
// it). It reads through client-go informers and streams changes to the
// page as server-sent events.
//
// It listens on loopback only, and every request must carry the random
// token of the URL it prints (or the cookie the first request sets): the
// page is the cluster's admin's, and so is anyone who can load it.
package ui

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
	"sigs.k8s.io/yaml"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterclock"
	"github.com/kubesim/kubesim/internal/explain"
)

//go:embed static
var static embed.FS

// Options are what a UI serves and where.
type Options struct {
	Cluster string
	// Address is the loopback address to listen on; Port 0 is a free one.
	Address string
	Port    int
	Kube    kubernetes.Interface
	// ExplainPod is `kubesim explain pod`'s explanation (with Karpenter's
	// view of a Pending pod), as -o json prints it.
	ExplainPod func(ctx context.Context, namespace, name string) (*explain.Explanation, error)
	// ExplainNode is `kubesim explain node`: JSON, and its text as the
	// CLI prints it.
	ExplainNode func(ctx context.Context, name string) (any, string, error)
	// Clock is the cluster's, nil for real time.
	Clock *v1alpha1.Clock
	// Metrics, when the cluster serves metrics.k8s.io, gives the nodes'
	// usage; polled, as the metrics API has no watch.
	Metrics metricsclient.Interface
	// Actions, nil for a read-only page.
	Actions *Actions
}

// Server is a running UI.
type Server struct {
	URL   string
	token string
	o     Options
	model *model
	srv   *http.Server
	ln    net.Listener
}

// tokenCookie holds the token once the page is loaded: the page's own
// requests (its script, its event stream) carry it without a URL.
const tokenCookie = "kubesim-ui-token"

// actionHeader marks the page's own writes.
const actionHeader = "X-Kubesim-UI"

// Listen checks the options, starts following the cluster and listens.
// Serve then answers until its context ends.
func Listen(ctx context.Context, o Options) (*Server, error) {
	ln, token, err := listen(o.Address, o.Port)
	if err != nil {
		return nil, err
	}
	factory := informers.NewSharedInformerFactory(o.Kube, 0)
	m := newModel(factory)
	if servesDevices(o.Kube) {
		m.followDevices(factory)
	}
	s := &Server{token: token, o: o, model: m, ln: ln}
	s.URL = "http://" + ln.Addr().String() + "/?token=" + s.token
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			ln.Close()
			return nil, fmt.Errorf("cluster %q: could not list %v", o.Cluster, typ)
		}
	}
	go s.model.run(ctx.Done())
	if o.Metrics != nil {
		go s.model.pollUsage(ctx, o.Metrics)
	}
	s.srv = &http.Server{Handler: s.handler(), ReadHeaderTimeout: clusterclock.Stretch(10 * time.Second)}
	return s, nil
}

// listen listens on a loopback address and draws the token.
func listen(address string, port int) (net.Listener, string, error) {
	ip := net.ParseIP(address)
	if ip == nil || !ip.IsLoopback() {
		return nil, "", fmt.Errorf("--address %s: the UI listens on a loopback address only (127.0.0.1 or ::1): it serves the cluster's admin to whoever loads it", address)
	}
	if port < 0 || port > 65535 {
		return nil, "", fmt.Errorf("--port %d: not a port; give 1–65535, or 0 for a free one", port)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(ip.String(), strconv.Itoa(port)))
	if err != nil {
		return nil, "", fmt.Errorf("--port %d: %v", port, err)
	}
	secret := make([]byte, 24)
	if _, err := rand.Read(secret); err != nil {
		ln.Close()
		return nil, "", err
	}
	return ln, hex.EncodeToString(secret), nil
}

// Serve answers until ctx ends.
func (s *Server) Serve(ctx context.Context) error {
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), clusterclock.Stretch(2*time.Second))
		defer cancel()
		_ = s.srv.Shutdown(shutdown)
	}()
	if err := s.srv.Serve(s.ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	files, _ := fs.Sub(static, "static")
	mux.Handle("GET /", http.FileServerFS(files))
	mux.HandleFunc("GET /api/cluster", s.cluster)
	mux.HandleFunc("GET /api/watch", s.watch)
	mux.HandleFunc("GET /api/explain/{namespace}/{name}", s.explainPod)
	mux.HandleFunc("GET /api/pod/{namespace}/{name}", s.pod)
	mux.HandleFunc("GET /api/node/{name}", s.node)
	mux.HandleFunc("GET /api/explain-node/{name}", s.explainNode)
	mux.HandleFunc("GET /api/workload/{kind}/{namespace}/{name}", s.workload)
	mux.HandleFunc("POST /api/action", s.act)
	return guard(s.ln.Addr().String(), s.token, mux)
}

// guard lets through only requests for this server by name (no DNS
// rebinding) carrying the token, and gives every answer a policy that
// loads nothing from anywhere else.
func guard(addr, token string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		if r.Host != addr {
			http.Error(w, "this server answers to "+addr+" only", http.StatusMisdirectedRequest)
			return
		}
		given := r.URL.Query().Get("token")
		if c, err := r.Cookie(tokenCookie); given == "" && err == nil {
			given = c.Value
		}
		if subtle.ConstantTimeCompare([]byte(given), []byte(token)) != 1 {
			http.Error(w, "401: this page needs the token of the URL kubesim printed", http.StatusUnauthorized)
			return
		}
		// A write must carry a header no other site's page can set
		// without a CORS preflight, which this server never answers.
		if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Header.Get(actionHeader) != "1" {
			http.Error(w, "403: a change needs the header "+actionHeader, http.StatusForbidden)
			return
		}
		if r.URL.Query().Has("token") {
			// Kept in a cookie the page's script cannot read, and the
			// page's URL cleaned of it: it leaves no trace in the history.
			http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			if r.URL.Path == "/" || strings.HasSuffix(r.URL.Path, ".html") {
				http.Redirect(w, r, r.URL.Path, http.StatusSeeOther)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) cluster(w http.ResponseWriter, r *http.Request) {
	info := map[string]any{"name": s.o.Cluster, "readOnly": s.o.Actions == nil}
	if c := s.o.Clock; c != nil {
		// The page keeps the cluster's time from these, as Clock.Now does.
		info["clock"] = map[string]any{"scale": c.Scale, "epochMs": c.Epoch / 1e6, "anchorMs": c.Anchor / 1e6}
	}
	if s.o.Actions != nil {
		info["deschedulerProfiles"] = s.o.Actions.Profiles
	}
	writeJSON(w, info)
}

// watch streams the model's batches as server-sent events: a snapshot,
// then the changes.
func (s *Server) watch(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	first, ch, err := s.model.subscribe()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer s.model.unsubscribe(ch)
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(msg []byte) bool {
		if _, err := fmt.Fprintf(w, "data: %s\n\n", msg); err != nil {
			return false
		}
		flusher.Flush()
		return true
	}
	if !send(first) {
		return
	}
	keepAlive := time.NewTicker(clusterclock.Stretch(15 * time.Second))
	defer keepAlive.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case msg, open := <-ch:
			if !open || !send(msg) {
				return
			}
		case <-keepAlive.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			flusher.Flush()
		}
	}
}

func (s *Server) explainPod(w http.ResponseWriter, r *http.Request) {
	e, err := s.o.ExplainPod(r.Context(), r.PathValue("namespace"), r.PathValue("name"))
	if err != nil {
		writeProblem(w, err)
		return
	}
	// explain -o json's, with the line explain pod prints on why the
	// chosen node won.
	writeJSON(w, struct {
		*explain.Explanation
		Decided string `json:"decided,omitempty"`
	}{e, e.DecidedText()})
}

func (s *Server) explainNode(w http.ResponseWriter, r *http.Request) {
	x, text, err := s.o.ExplainNode(r.Context(), r.PathValue("name"))
	if err != nil {
		writeProblem(w, err)
		return
	}
	writeJSON(w, map[string]any{"explanation": x, "text": text})
}

// pod is a pod's conditions, its events (oldest first) and its YAML, as
// kubectl get -o yaml prints it.
func (s *Server) pod(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	p, err := s.o.Kube.CoreV1().Pods(ns).Get(r.Context(), name, metav1.GetOptions{})
	if err != nil {
		writeProblem(w, err)
		return
	}
	p.ManagedFields = nil
	p.APIVersion, p.Kind = "v1", "Pod"
	text, err := yaml.Marshal(p)
	if err != nil {
		writeProblem(w, err)
		return
	}
	events, err := s.o.Kube.CoreV1().Events(ns).List(r.Context(), metav1.ListOptions{
		FieldSelector: fields.AndSelectors(fields.OneTermEqualSelector("involvedObject.kind", "Pod"), fields.OneTermEqualSelector("involvedObject.name", name)).String()})
	if err != nil {
		writeProblem(w, err)
		return
	}
	var evs []Event
	for i := range events.Items {
		if events.Items[i].InvolvedObject.UID == p.UID {
			evs = append(evs, eventOf(&events.Items[i]))
		}
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].Time.Before(evs[j].Time) })
	writeJSON(w, map[string]any{"conditions": p.Status.Conditions, "events": evs, "yaml": string(text)})
}

func (s *Server) node(w http.ResponseWriter, r *http.Request) {
	n, err := s.o.Kube.CoreV1().Nodes().Get(r.Context(), r.PathValue("name"), metav1.GetOptions{})
	if err != nil {
		writeProblem(w, err)
		return
	}
	n.ManagedFields = nil
	writeJSON(w, n)
}

// workload is a Deployment's or StatefulSet's replicas, for the scale
// control.
func (s *Server) workload(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	var spec, ready int32
	switch r.PathValue("kind") {
	case "Deployment":
		d, err := s.o.Kube.AppsV1().Deployments(ns).Get(r.Context(), name, metav1.GetOptions{})
		if err != nil {
			writeProblem(w, err)
			return
		}
		spec, ready = ptrOr(d.Spec.Replicas, 1), d.Status.ReadyReplicas
	case "StatefulSet":
		st, err := s.o.Kube.AppsV1().StatefulSets(ns).Get(r.Context(), name, metav1.GetOptions{})
		if err != nil {
			writeProblem(w, err)
			return
		}
		spec, ready = ptrOr(st.Spec.Replicas, 1), st.Status.ReadyReplicas
	default:
		writeJSON(w, map[string]any{"scalable": false})
		return
	}
	writeJSON(w, map[string]any{"scalable": true, "replicas": spec, "ready": ready})
}

func ptrOr(p *int32, or int32) int32 {
	if p == nil {
		return or
	}
	return *p
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func writeProblem(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	if apierrors.IsNotFound(err) {
		code = http.StatusNotFound
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
}
