package kubeletsim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kubesim/kubesim/internal/stage"
)

// errNoImpersonation refuses a Pod's or Node's patch made as another user:
// their writes go through the simulator's own typed client, as in KWOK.
var errNoImpersonation = errors.New("impersonation is not available for Pods and Nodes: drop the patch's impersonation")

// fieldManager is who kubesim's server-side applies are recorded as.
const fieldManager = "kubesim"

// objectWriter makes the writes of stages that reach past their own
// object's client: apply steps (any kind a Stage names), and writes made
// as another user (impersonation). The API server checks both against the
// simulator's grants, which the supervisor keeps to exactly what the
// cluster's Stages name.
type objectWriter struct {
	config *rest.Config
	mapper meta.ResettableRESTMapper

	mu      sync.Mutex
	clients map[string]dynamic.Interface // by user impersonated; "": none
}

func newObjectWriter(config *rest.Config, mapper meta.ResettableRESTMapper) *objectWriter {
	return &objectWriter{config: config, mapper: mapper, clients: map[string]dynamic.Interface{}}
}

// client is a dynamic client acting as user as ("" the simulator itself).
func (w *objectWriter) client(as string) (dynamic.Interface, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c, ok := w.clients[as]; ok {
		return c, nil
	}
	cfg := rest.CopyConfig(w.config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: as}
	c, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	w.clients[as] = c
	return c, nil
}

// mapping finds where objects of gvk are served, looking again once if
// the kind is unknown (its CRD may have arrived since).
func (w *objectWriter) mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := w.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		w.mapper.Reset()
		m, err = w.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("apply of %s: the API server serves no such kind", gvk)
	}
	return m, nil
}

// apply carries out an apply step: the object is created, or patched if
// it exists; with a subresource, only that is patched.
func (w *objectWriter) apply(ctx context.Context, a stage.Apply) error {
	obj := &unstructured.Unstructured{}
	if err := json.Unmarshal(a.Data, &obj.Object); err != nil {
		return err
	}
	gvk := obj.GroupVersionKind()
	m, err := w.mapping(gvk)
	if err != nil {
		return err
	}
	c, err := w.client(a.As)
	if err != nil {
		return err
	}
	var ri dynamic.ResourceInterface = c.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		if obj.GetNamespace() == "" {
			obj.SetNamespace(a.Namespace)
		}
		if obj.GetNamespace() == "" {
			return fmt.Errorf("apply of %s %s: a namespaced kind needs metadata.namespace", gvk.Kind, obj.GetName())
		}
		ri = c.Resource(m.Resource).Namespace(obj.GetNamespace())
	} else {
		obj.SetNamespace("")
	}
	opts := metav1.PatchOptions{}
	if a.Type == "application/apply-patch+yaml" {
		opts = metav1.PatchOptions{FieldManager: fieldManager, Force: new(true)}
	}
	data, err := obj.MarshalJSON()
	if err != nil {
		return err
	}
	if a.Subresource != "" {
		_, err = ri.Patch(ctx, obj.GetName(), a.Type, data, opts, a.Subresource)
		return err
	}
	_, err = ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: fieldManager})
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	_, err = ri.Patch(ctx, obj.GetName(), a.Type, data, opts)
	return err
}
