package usage

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kubesim/kubesim/internal/clusterclock"
	"github.com/kubesim/kubesim/internal/kubeletsim"
)

// kubeletPort answers what the API server asks of a simulated node's
// kubelet — its node proxy (a Prometheus scrape of /metrics/resource),
// logs, exec — reaching it through the egress proxy: the paths of the
// cluster's Metrics, evaluated as they are read, and a clear refusal of
// the rest. It takes only the API server's kubelet client certificate as
// a caller: the API server has authorized the user already (nodes/proxy).
type kubeletPort struct {
	endpoints *Endpoints
	nodes     corelisters.NodeLister
	byNode    cache.Indexer // pods, indexed by node name
	maps      *objectMaps
	failed    func(*EvalError)
	// caller is the common name of the API server's kubelet client
	// certificate (of the cluster CA, which the TLS handshake verified).
	caller string
	use    *firstUse
}

// serveKubeletPort serves h on the unix socket until ctx ends, with TLS
// (the API server dials kubelets by https, without verifying their
// certificate unless told a CA) and client certificates of caFile.
func serveKubeletPort(ctx context.Context, socket, certFile, keyFile, caFile string, h http.Handler) error {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return fmt.Errorf("--tls-cert-file/--tls-private-key-file: %w", err)
	}
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		return fmt.Errorf("the client CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return fmt.Errorf("%s: no certificate", caFile)
	}
	_ = os.Remove(socket) // left by a process that was killed
	l, err := net.Listen("unix", socket)
	if err != nil {
		return fmt.Errorf("--kubelet-socket: %w", err)
	}
	srv := &http.Server{
		Handler: h,
		// On the cluster's clock: as long in real time on a scaled one.
		ReadHeaderTimeout: clusterclock.Stretch(10 * time.Second),
		// A caller without a certificate is told why rather than failing
		// the handshake.
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: pool, ClientAuth: tls.VerifyClientCertIfGiven,
			MinVersion: tls.VersionTLS12},
	}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	go func() {
		if err := srv.ServeTLS(l, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			klog.ErrorS(err, "The simulated kubelet port stopped serving: kwok.x-k8s.io Metrics are not served", "socket", socket)
		}
	}()
	return nil
}

func (k *kubeletPort) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 || r.TLS.VerifiedChains[0][0].Subject.CommonName != k.caller {
		http.Error(w, "kubesim usage-metrics: the simulated kubelet port answers the API server only: "+
			"kubectl get --raw /api/v1/nodes/NODE/proxy/PATH", http.StatusUnauthorized)
		return
	}
	ep, nodeName, ok := k.endpoints.match(r.URL.Path)
	switch {
	case ok && ep.err != nil:
		http.Error(w, fmt.Sprintf("kwok.x-k8s.io Metric %s is not served: %v", ep.ref.Name, ep.err), http.StatusNotFound)
		return
	case ok && r.Method == http.MethodGet:
	case ok:
		http.Error(w, fmt.Sprintf("kwok.x-k8s.io Metric %s is served by GET only, not %s", ep.ref.Name, r.Method), http.StatusMethodNotAllowed)
		return
	case strings.HasPrefix(r.URL.Path, "/metrics/"):
		http.Error(w, fmt.Sprintf("no kwok.x-k8s.io Metric serves %s %s on a simulated node (kubectl get metrics.kwok.x-k8s.io)", r.Method, r.URL.Path), http.StatusNotFound)
		return
	default:
		http.Error(w, kubeletsim.Refusal(nodeAddress(r.Host)), http.StatusNotImplemented)
		return
	}
	if err := k.use.wait(r.Context()); err != nil {
		http.Error(w, "kubesim usage-metrics: pods and nodes not listed yet: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	node, err := k.nodes.Get(nodeName)
	if err != nil {
		http.Error(w, fmt.Sprintf("kwok.x-k8s.io Metric %s: node %s: %v", ep.ref.Name, nodeName, err), http.StatusNotFound)
		return
	}
	var buf bytes.Buffer
	if err := ep.expose(&buf, node, k.podsOf(node.Name), k.maps, k.failed); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write(buf.Bytes())
}

// podsOf are the pods of the node that metrics.k8s.io counts, by
// namespace and name.
func (k *kubeletPort) podsOf(node string) []*corev1.Pod {
	objs, _ := k.byNode.ByIndex(nodeNameIndex, node)
	pods := make([]*corev1.Pod, 0, len(objs))
	for _, obj := range objs {
		if pod := obj.(*corev1.Pod); hasMetrics(pod) {
			pods = append(pods, pod)
		}
	}
	slices.SortFunc(pods, func(a, b *corev1.Pod) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return pods
}

// nodeAddress is the node's address the API server dialled, as the request
// names it: its logs and exec do, its node proxy names the API server's
// own (loopback) instead, and then it is not known.
func nodeAddress(hostport string) string {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsLoopback() {
		return ""
	}
	return host
}
