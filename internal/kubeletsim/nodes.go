package kubeletsim

import (
	"context"
	"sync"
	"text/template"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"

	"github.com/kubesim/kubesim/internal/stage"
)

// nodeKind is how the stage runner reads and changes Nodes.
type nodeKind struct{ s *Simulator }

func (k *nodeKind) name() string { return "Node" }

func (k *nodeKind) get(key string) (runtime.Object, bool) {
	node, err := k.s.nodeLister.Get(key)
	return node, err == nil
}

func (k *nodeKind) managed(obj runtime.Object) bool {
	return k.s.managesNode(obj.(*corev1.Node))
}

func (k *nodeKind) keys() []string {
	nodes, _ := k.s.nodeLister.List(labels.Everything())
	keys := make([]string, 0, len(nodes))
	for _, n := range nodes {
		keys = append(keys, n.Name)
	}
	return keys
}

func (k *nodeKind) funcs(obj runtime.Object) template.FuncMap {
	node := obj.(*corev1.Node)
	return template.FuncMap{
		"NodeIP":         func() (string, error) { return k.s.nodeIP(node) },
		"NodeName":       func() string { return node.Name },
		"NodePort":       func() int { return k.s.opts.KubeletPort },
		"NodeConditions": nodeConditions,
		"Version":        k.s.kubeletVersion,
		"KubeletVersion": func() string { return k.s.nodeKubeletVersion(node) },
	}
}

func (k *nodeKind) traits() stage.Traits { return stage.Traits{} }

func (k *nodeKind) patch(ctx context.Context, obj runtime.Object, p stage.Patch) (runtime.Object, error) {
	node := obj.(*corev1.Node)
	if p.As != "" {
		return nil, errNoImpersonation
	}
	return k.s.client.CoreV1().Nodes().Patch(ctx, node.Name, p.Type, p.Data, metav1.PatchOptions{}, p.Subresources()...)
}

func (k *nodeKind) remove(ctx context.Context, obj runtime.Object) error {
	node := obj.(*corev1.Node)
	return k.s.client.CoreV1().Nodes().Delete(ctx, node.Name, metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(node.UID))})
}

// nodeConditions are the conditions of a healthy node, as a kubelet
// reports them.
func nodeConditions() []map[string]string {
	return []map[string]string{
		{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status"},
		{"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory", "message": "kubelet has sufficient memory available"},
		{"type": "DiskPressure", "status": "False", "reason": "KubeletHasNoDiskPressure", "message": "kubelet has no disk pressure"},
		{"type": "PIDPressure", "status": "False", "reason": "KubeletHasSufficientPID", "message": "kubelet has sufficient PID available"},
		{"type": "NetworkUnavailable", "status": "False", "reason": "RouteCreated", "message": "simulated network is up"},
	}
}

func (s *Simulator) kubeletVersion() string { return "kubesim-" + s.opts.Version }

// nodeKubeletVersion is the version a node's kubelet reports: the one the
// node already has (from its template, or its source cluster's in a
// clone), as KWOK keeps it; else the cluster's release, as `kubectl get
// nodes` shows a real cluster's (kubesim-<version> if unknown).
func (s *Simulator) nodeKubeletVersion(node *corev1.Node) string {
	if v := node.Status.NodeInfo.KubeletVersion; v != "" {
		return v
	}
	if v := s.release.get(); v != "" {
		return v
	}
	return s.kubeletVersion()
}

// release is the API server's version (v1.35.4), read when a node needs it
// and at most every releaseTTL: a control-plane upgrade changes it under a
// running simulator, and the nodes made after it report the new one.
type release struct {
	discovery discovery.ServerVersionInterface
	mu        sync.Mutex
	version   string
	read      time.Time
}

const releaseTTL = 10 * time.Second

func (r *release) get() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.discovery != nil && (r.version == "" || time.Since(r.read) > releaseTTL) {
		if v, err := r.discovery.ServerVersion(); err == nil {
			r.version, r.read = v.GitVersion, time.Now()
		}
	}
	return r.version
}
