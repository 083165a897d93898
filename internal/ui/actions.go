package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubectl/pkg/drain"
)

// Actions are what the page may change, each done as the CLI does it and
// through the user's own credentials (their kubeconfig's context for the
// cluster), so RBAC applies as it does to kubectl. Nil: read-only.
type Actions struct {
	Client kubernetes.Interface
	// StopNode and StartNode are `kubesim node stop` and `node start`.
	StopNode, StartNode func(ctx context.Context, node string) (string, error)
	// Deschedule is `kubesim deschedule --profile PROFILE`, its report as
	// the CLI prints it; Profiles are the profiles it takes.
	Deschedule func(ctx context.Context, profile string) (string, error)
	Profiles   []string
	// DrainTimeout bounds a drain, as kubectl drain's --timeout.
	DrainTimeout time.Duration
}

// Action is one request of the page.
type Action struct {
	Action    string `json:"action"` // cordon, uncordon, drain, stop, start, scale, deschedule
	Node      string `json:"node,omitempty"`
	Kind      string `json:"kind,omitempty"` // Deployment or StatefulSet, to scale
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	Replicas  *int32 `json:"replicas,omitempty"`
	Profile   string `json:"profile,omitempty"` // the descheduler's
}

// ActionResult is what the page shows: the output the CLI would print,
// and its error.
type ActionResult struct {
	Output string `json:"output"`
	Error  string `json:"error,omitempty"`
}

func (s *Server) act(w http.ResponseWriter, r *http.Request) {
	a := s.o.Actions
	if a == nil {
		http.Error(w, "read-only: kubesim ui --read-only changes nothing", http.StatusForbidden)
		return
	}
	var req Action
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&req); err != nil {
		http.Error(w, "the action is not JSON: "+err.Error(), http.StatusBadRequest)
		return
	}
	out, err := a.do(r.Context(), req)
	res := ActionResult{Output: out}
	if err != nil {
		res.Error = err.Error()
	}
	writeJSON(w, res)
}

func (a *Actions) do(ctx context.Context, req Action) (string, error) {
	needNode := func() error {
		if req.Node == "" {
			return fmt.Errorf("%s: no node named", req.Action)
		}
		return nil
	}
	switch req.Action {
	case "cordon", "uncordon":
		if err := needNode(); err != nil {
			return "", err
		}
		var out bytes.Buffer
		h := a.drainer(ctx, &out)
		n, err := a.Client.CoreV1().Nodes().Get(ctx, req.Node, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		if err := drain.RunCordonOrUncordon(h, n, req.Action == "cordon"); err != nil {
			return out.String(), err
		}
		return fmt.Sprintf("node/%s %sed\n", req.Node, req.Action), nil
	case "drain":
		if err := needNode(); err != nil {
			return "", err
		}
		return a.drain(ctx, req.Node)
	case "stop":
		if err := needNode(); err != nil {
			return "", err
		}
		return a.StopNode(ctx, req.Node)
	case "start":
		if err := needNode(); err != nil {
			return "", err
		}
		return a.StartNode(ctx, req.Node)
	case "scale":
		return a.scale(ctx, req)
	case "deschedule":
		return a.Deschedule(ctx, req.Profile)
	}
	return "", fmt.Errorf("action %q: give cordon, uncordon, drain, stop, start, scale or deschedule", req.Action)
}

// drainer is kubectl drain's helper as `kubectl drain --ignore-daemonsets
// --delete-emptydir-data --timeout` sets it up: a refused eviction is
// tried again after 5 seconds.
func (a *Actions) drainer(ctx context.Context, out *bytes.Buffer) *drain.Helper {
	return &drain.Helper{Ctx: ctx, Client: a.Client, GracePeriodSeconds: -1, IgnoreAllDaemonSets: true,
		DeleteEmptyDirData: true, Timeout: a.DrainTimeout, EvictErrorRetryDelay: 5 * time.Second, Out: out, ErrOut: out}
}

// drain cordons the node and evicts its pods, as kubectl drain does:
// an eviction a PodDisruptionBudget refuses is tried again every 5
// seconds until the timeout, each refusal said.
func (a *Actions) drain(ctx context.Context, node string) (string, error) {
	var out bytes.Buffer
	h := a.drainer(ctx, &out)
	n, err := a.Client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	if err := drain.RunCordonOrUncordon(h, n, true); err != nil {
		return out.String(), err
	}
	fmt.Fprintf(&out, "node/%s cordoned\n", node)
	if err := drain.RunNodeDrain(h, node); err != nil {
		return out.String(), fmt.Errorf("drain did not complete within %s: %w", a.DrainTimeout, err)
	}
	fmt.Fprintf(&out, "node/%s drained\n", node)
	return out.String(), nil
}

// scaler is the scale subresource of Deployments and of StatefulSets.
type scaler interface {
	GetScale(ctx context.Context, name string, opts metav1.GetOptions) (*autoscalingv1.Scale, error)
	UpdateScale(ctx context.Context, name string, scale *autoscalingv1.Scale, opts metav1.UpdateOptions) (*autoscalingv1.Scale, error)
}

func (a *Actions) scale(ctx context.Context, req Action) (string, error) {
	if req.Replicas == nil || *req.Replicas < 0 {
		return "", fmt.Errorf("scale: replicas: give 0 or more")
	}
	var c scaler
	switch req.Kind {
	case "Deployment":
		c = a.Client.AppsV1().Deployments(req.Namespace)
	case "StatefulSet":
		c = a.Client.AppsV1().StatefulSets(req.Namespace)
	default:
		return "", fmt.Errorf("scale: kind %q: give Deployment or StatefulSet", req.Kind)
	}
	scale, err := c.GetScale(ctx, req.Name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	scale.Spec.Replicas = *req.Replicas
	if _, err := c.UpdateScale(ctx, req.Name, scale, metav1.UpdateOptions{}); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s.apps/%s scaled\n", strings.ToLower(req.Kind), req.Name), nil
}
