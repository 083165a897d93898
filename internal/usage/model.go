// Package usage is simulated resource usage: the ResourceUsages and
// ClusterResourceUsages of a cluster (KWOK's API) evaluated for its pods,
// with a default where they declare nothing, and the component that serves
// it as metrics.k8s.io, so that kubectl top, the HorizontalPodAutoscaler
// and the descheduler read it as they would a metrics-server's.
package usage

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	kwokv1alpha1 "github.com/kubesim/kubesim/apis/kwok/v1alpha1"
	"github.com/kubesim/kubesim/internal/kwokcel"
)

// DefaultFactor is the share of its requests a container uses where no
// usage is declared for it.
const DefaultFactor = 0.5

// Where a container declares no request (nor limit) of a resource and no
// usage is declared for it: KWOK's usage-from-annotation's defaults.
var (
	floorCPU    = resource.MustParse("1m")
	floorMemory = resource.MustParse("1Mi")
)

// Model is the declared usage of a cluster's pods. Safe for concurrent use.
type Model struct {
	// Factor: a container without declared usage uses Factor × its
	// requests (its limits where it requests nothing).
	Factor float64

	env     *kwokcel.Env
	mu      sync.RWMutex
	byPod   map[string]*declared // ResourceUsages, by namespace/name
	cluster []*declared          // ClusterResourceUsages, by name
	fields  *objectFields        // what their expressions read, and those before
}

// declared is one ResourceUsage or ClusterResourceUsage, compiled.
type declared struct {
	Ref      Ref
	selector *kwokv1alpha1.ObjectSelector
	labels   labels.Selector // the selector's labels; nil: any
	usages   []containerUsage
}

// Ref names a usage object.
type Ref struct {
	Kind, Namespace, Name string
}

func (r Ref) String() string {
	if r.Namespace == "" {
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}

type containerUsage struct {
	containers []string
	values     map[string]value
}

// value is a constant, a program, or the reason it did not compile.
type value struct {
	constant *float64
	program  *kwokcel.Program
	err      error
}

// NewModel is a model with no declared usage.
func NewModel(factor float64) (*Model, error) {
	env, err := kwokcel.NewUsageEnv()
	if err != nil {
		return nil, err
	}
	return &Model{Factor: factor, env: env, byPod: map[string]*declared{}, fields: newObjectFields()}, nil
}

// SetResourceUsage declares (or redeclares) a pod's usage. The error says
// which of its expressions did not compile; the others apply anyway, and
// the containers whose usage did not compile report none.
func (m *Model) SetResourceUsage(u *kwokv1alpha1.ResourceUsage) error {
	d, err := m.compile(Ref{kwokv1alpha1.ResourceUsageKind, u.Namespace, u.Name}, nil, u.Spec.Usages)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.byPod[u.Namespace+"/"+u.Name] = d
	m.fields = m.fields.with(d)
	return err
}

// DeleteResourceUsage forgets a pod's usage.
func (m *Model) DeleteResourceUsage(namespace, name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.byPod, namespace+"/"+name)
}

// SetClusterResourceUsage declares (or redeclares) a ClusterResourceUsage;
// its error is as SetResourceUsage's.
func (m *Model) SetClusterResourceUsage(u *kwokv1alpha1.ClusterResourceUsage) error {
	d, err := m.compile(Ref{Kind: kwokv1alpha1.ClusterResourceUsageKind, Name: u.Name}, u.Spec.Selector, u.Spec.Usages)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cluster = slices.DeleteFunc(m.cluster, func(c *declared) bool { return c.Ref.Name == u.Name })
	i, _ := slices.BinarySearchFunc(m.cluster, u.Name, func(c *declared, name string) int { return strings.Compare(c.Ref.Name, name) })
	m.cluster = slices.Insert(m.cluster, i, d)
	m.fields = m.fields.with(d)
	return err
}

// DeleteClusterResourceUsage forgets a ClusterResourceUsage.
func (m *Model) DeleteClusterResourceUsage(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cluster = slices.DeleteFunc(m.cluster, func(c *declared) bool { return c.Ref.Name == name })
}

func (m *Model) compile(ref Ref, sel *kwokv1alpha1.ObjectSelector, usages []kwokv1alpha1.ResourceUsageContainer) (*declared, error) {
	d := &declared{Ref: ref, selector: sel.DeepCopy()}
	var errs []error
	if ls := sel.LabelSelector(); ls != nil {
		s, err := metav1.LabelSelectorAsSelector(ls)
		if err != nil {
			// Matching nothing is safer than matching every pod.
			s = labels.Nothing()
			errs = append(errs, fmt.Errorf("spec.selector: %w", err))
		}
		d.labels = s
	}
	for i, u := range usages {
		cu := containerUsage{containers: slices.Clone(u.Containers), values: map[string]value{}}
		for res, v := range u.Usage {
			field := fmt.Sprintf("spec.usages[%d].usage.%s", i, res)
			switch {
			case v.Value != nil:
				f := v.Value.AsApproximateFloat64()
				if f < 0 {
					err := fmt.Errorf("%s.value: %s is negative; give a usage of 0 or more", field, v.Value)
					cu.values[res] = value{err: err}
					errs = append(errs, err)
					continue
				}
				if err := fits(res, f); err != nil {
					err = fmt.Errorf("%s.value: %w; give a smaller usage", field, err)
					cu.values[res] = value{err: err}
					errs = append(errs, err)
					continue
				}
				cu.values[res] = value{constant: &f}
			case v.Expression != nil:
				p, err := m.env.Compile(*v.Expression)
				if err != nil {
					err = fmt.Errorf("%s.expression: %w", field, err)
					errs = append(errs, err)
				}
				cu.values[res] = value{program: p, err: err}
			}
		}
		d.usages = append(d.usages, cu)
	}
	return d, errors.Join(errs...)
}

// Subject is what a usage is evaluated for: a pod, its node, and their
// maps as expressions see them (made when first needed).
type Subject struct {
	Pod  *corev1.Pod
	Node *corev1.Node
	// budget, if set, is what the read it is evaluated for may spend.
	budget *readBudget

	// maps, if set, keeps the objects' maps from one evaluation to the
	// next, with the fields the model's expressions read.
	maps            *objectMaps
	fields, mapsFor *objectFields // the model's; those the maps were made with
	podMap, nodeMap map[string]any
}

// EvalError is a usage that could not be evaluated for a pod: it reports
// no metric.
type EvalError struct {
	Usage Ref
	Err   error
}

func (e *EvalError) Error() string { return e.Usage.String() + ": " + e.Err.Error() }
func (e *EvalError) Unwrap() error { return e.Err }

// ContainerUsage is what the container uses of the resource ("cpu" in
// cores, "memory" in bytes): the first declaration that covers it — the
// pod's ResourceUsage, then the ClusterResourceUsages that select the pod,
// by name — else Factor × its request.
func (m *Model) ContainerUsage(s *Subject, container *corev1.Container, res string) (float64, error) {
	m.mu.RLock()
	s.fields = m.fields
	decls := make([]*declared, 0, 1+len(m.cluster))
	if d := m.byPod[s.Pod.Namespace+"/"+s.Pod.Name]; d != nil {
		decls = append(decls, d)
	}
	for _, d := range m.cluster {
		if d.selector.Matches(s.Pod.Namespace, s.Pod.Name) && (d.labels == nil || d.labels.Matches(labels.Set(s.Pod.Labels))) {
			decls = append(decls, d)
		}
	}
	m.mu.RUnlock()
	for _, d := range decls {
		v, ok := d.lookup(container.Name, res)
		if !ok {
			continue
		}
		f, err := s.eval(d.Ref, v, container)
		if err == nil {
			err = fits(res, f)
		}
		if v.err != nil || ofTheObject(err) {
			return 0, &EvalError{Usage: d.Ref, Err: fmt.Errorf("%s: %w", res, err)}
		}
		if err != nil {
			return 0, &EvalError{Usage: d.Ref, Err: fmt.Errorf("pod %s/%s container %s, %s: %w", s.Pod.Namespace, s.Pod.Name, container.Name, res, err)}
		}
		return f, nil
	}
	return m.defaultUsage(container, res), nil
}

// lookup is the declared usage of the container's resource: of the first
// entry naming the container, else of the first naming none.
func (d *declared) lookup(container, res string) (value, bool) {
	var fallback *containerUsage
	for i, u := range d.usages {
		if len(u.containers) == 0 {
			if fallback == nil {
				fallback = &d.usages[i]
			}
			continue
		}
		if slices.Contains(u.containers, container) {
			v, ok := u.values[res]
			return v, ok
		}
	}
	if fallback == nil {
		return value{}, false
	}
	v, ok := fallback.values[res]
	return v, ok
}

// eval is the value for the subject, its expression (of the usage object
// ref) evaluated within the subject's budget.
func (s *Subject) eval(ref Ref, v value, container *corev1.Container) (float64, error) {
	switch {
	case v.err != nil:
		return 0, v.err
	case v.constant != nil:
		return *v.constant, nil
	}
	if err := s.budget.allow(ref); err != nil {
		return 0, err
	}
	f, cost, err := v.program.NumberCost(s.vars(v.program, container))
	s.budget.spend(ref, cost)
	if err != nil {
		return 0, err
	}
	if f < 0 {
		return 0, fmt.Errorf("the expression returned %v, a negative value", f)
	}
	return f, nil
}

// vars are the variables p sees: the pod, its node and the container (nil:
// none; a subject without a pod has neither). Made when first read: a
// node's status makes it the costlier.
func (s *Subject) vars(p *kwokcel.Program, container *corev1.Container) map[string]any {
	// Made when first read, and only if read: a node's status makes it
	// the costlier. Usages declared since they were made may read more.
	if s.mapsFor != s.fields {
		s.podMap, s.nodeMap, s.mapsFor = nil, nil, s.fields
	}
	var podFields, nodeFields *kwokcel.Fields
	if s.fields != nil {
		podFields, nodeFields = s.fields.pod, s.fields.node
	}
	vars := map[string]any{}
	if s.Pod != nil {
		if s.podMap == nil && (p.Reads("pod") || p.Reads("container")) {
			s.podMap = s.maps.of(s.Pod, "Pod", podFields)
		}
		vars["pod"] = s.podMap
		if container != nil && p.Reads("container") {
			vars["container"] = s.containerMap(container.Name)
		}
	}
	if p.Reads("node") {
		if s.nodeMap == nil {
			if s.Node != nil {
				s.nodeMap = s.maps.of(s.Node, "Node", nodeFields)
			} else {
				s.nodeMap = objectMap(nil, "Node") // a nil *Node is no nil Object
			}
		}
		vars["node"] = s.nodeMap
	}
	return vars
}

// containerMap is the pod's container as expressions see it: the one of
// the pod's map, made once for all its containers.
func (s *Subject) containerMap(name string) map[string]any {
	spec, _ := s.podMap["spec"].(map[string]any)
	containers, _ := spec["containers"].([]any)
	for _, c := range containers {
		if m, ok := c.(map[string]any); ok && m["name"] == name {
			return m
		}
	}
	return map[string]any{"name": name}
}

// objectMap is obj as expressions see it, with its kind (which objects
// from the API's lists do not carry).
func objectMap(obj runtime.Object, kind string) map[string]any {
	m := map[string]any{}
	if obj != nil {
		if u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err == nil {
			m = u
		}
	}
	m["kind"], m["apiVersion"] = kind, "v1"
	// KWOK's expressions see typed objects, whose maps are never absent:
	// `"k" in pod.metadata.annotations` works on a pod without any.
	meta, _ := m["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		m["metadata"] = meta
	}
	for _, f := range []string{"labels", "annotations"} {
		if _, ok := meta[f]; !ok {
			meta[f] = map[string]any{}
		}
	}
	return m
}

func (m *Model) defaultUsage(c *corev1.Container, res string) float64 {
	name := corev1.ResourceName(res)
	q, ok := c.Resources.Requests[name]
	if !ok {
		q, ok = c.Resources.Limits[name]
	}
	if ok {
		return q.AsApproximateFloat64() * m.Factor
	}
	switch name {
	case corev1.ResourceCPU:
		return floorCPU.AsApproximateFloat64()
	case corev1.ResourceMemory:
		return floorMemory.AsApproximateFloat64()
	}
	return 0
}
