package usage

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	kwokv1alpha1 "github.com/kubesim/kubesim/apis/kwok/v1alpha1"
	"github.com/kubesim/kubesim/internal/kwokcel"
)

// Endpoints are the cluster's kwok.x-k8s.io Metrics, compiled: kubelet
// style Prometheus endpoints (KWOK's /metrics/nodes/{nodeName}/metrics/resource)
// on the simulated nodes' kubelet port, evaluated when scraped. Safe for
// concurrent use.
type Endpoints struct {
	env *kwokcel.Env

	mu     sync.RWMutex
	byName map[string]*endpoint
}

// endpoint is one Metric, compiled; err says why it is not served.
type endpoint struct {
	ref Ref
	// The path around {nodeName}; a path without it is of the node named
	// as the Metric, as KWOK has it.
	prefix, suffix string
	node           string
	metrics        []*exposed
	err            error
}

// exposed is one metric of an endpoint (spec.metrics[index]).
type exposed struct {
	index      int
	name, help string
	kind       kwokv1alpha1.MetricKindName
	dimension  kwokv1alpha1.MetricDimension
	labels     []exposedLabel
	value      *kwokcel.Program
	buckets    []exposedBucket // by le
}

type exposedLabel struct {
	name  string
	value *kwokcel.Program
}

type exposedBucket struct {
	le     float64
	hidden bool
	count  *kwokcel.Program
}

// NewEndpoints is a cluster without Metrics; their expressions read usage
// from r.
func NewEndpoints(r kwokcel.UsageReader) (*Endpoints, error) {
	env, err := kwokcel.NewMetricEnv(r)
	if err != nil {
		return nil, err
	}
	return &Endpoints{env: env, byName: map[string]*endpoint{}}, nil
}

// SetMetric declares (or redeclares) a Metric. The error names the fields
// that are not valid; the Metric is then not served (its path says why).
func (e *Endpoints) SetMetric(m *kwokv1alpha1.Metric) error {
	ep := e.compile(m)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.byName[m.Name] = ep
	return ep.err
}

// DeleteMetric forgets a Metric.
func (e *Endpoints) DeleteMetric(name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.byName, name)
}

// match is the endpoint serving path, and the node it is of: the first
// Metric by name whose path it is, an accepted one before one that is not.
func (e *Endpoints) match(path string) (*endpoint, string, bool) {
	e.mu.RLock()
	eps := make([]*endpoint, 0, len(e.byName))
	for _, ep := range e.byName {
		eps = append(eps, ep)
	}
	e.mu.RUnlock()
	slices.SortFunc(eps, func(a, b *endpoint) int {
		if (a.err == nil) != (b.err == nil) {
			if a.err == nil {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ref.Name, b.ref.Name)
	})
	for _, ep := range eps {
		if node, ok := ep.nodeOf(path); ok {
			return ep, node, true
		}
	}
	return nil, "", false
}

// nodeOf is the node whose endpoint path is.
func (ep *endpoint) nodeOf(path string) (string, bool) {
	if ep.node != "" {
		return ep.node, path == ep.prefix
	}
	if len(path) <= len(ep.prefix)+len(ep.suffix) || !strings.HasPrefix(path, ep.prefix) || !strings.HasSuffix(path, ep.suffix) {
		return "", false
	}
	node := path[len(ep.prefix) : len(path)-len(ep.suffix)]
	return node, !strings.Contains(node, "/")
}

const nodeNameParam = "{nodeName}"

// The names Prometheus' text format allows.
var (
	metricName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
	labelName  = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
)

func (e *Endpoints) compile(m *kwokv1alpha1.Metric) *endpoint {
	ep := &endpoint{ref: Ref{Kind: kwokv1alpha1.MetricKind, Name: m.Name}}
	var errs []error
	path := m.Spec.Path
	switch n := strings.Count(path, nodeNameParam); {
	case !strings.HasPrefix(path, "/metrics/"):
		// KWOK serves Metrics under /metrics only; the kubelet's other
		// paths (logs, exec…) are not a Metric's to take.
		errs = append(errs, fmt.Errorf("spec.path: %q does not start with /metrics/, as KWOK requires of a Metric's path", path))
	case n > 1:
		errs = append(errs, fmt.Errorf("spec.path: %q has %s %d times; give it once (each node's metrics) or not at all (the node named as the Metric)", path, nodeNameParam, n))
	case strings.ContainsAny(strings.Replace(path, nodeNameParam, "", 1), "{}"):
		errs = append(errs, fmt.Errorf("spec.path: %q: only %s may stand for a part of the path", path, nodeNameParam))
	case n == 1:
		ep.prefix, ep.suffix, _ = strings.Cut(path, nodeNameParam)
	default:
		ep.prefix, ep.node = path, m.Name
	}
	if len(m.Spec.Metrics) == 0 {
		errs = append(errs, fmt.Errorf("spec.metrics: none declared; give at least one"))
	}
	first := map[string]int{}
	for i, mc := range m.Spec.Metrics {
		x, err := e.compileMetric(i, &mc)
		if err == nil {
			if j, dup := first[x.name]; dup {
				err = fmt.Errorf("spec.metrics[%d].name: %q is spec.metrics[%d]'s too; give each metric of a path once", i, x.name, j)
			}
			first[x.name] = i
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ep.metrics = append(ep.metrics, x)
	}
	ep.err = joinErrors(errs)
	return ep
}

func (e *Endpoints) compileMetric(i int, mc *kwokv1alpha1.MetricConfig) (*exposed, error) {
	field := fmt.Sprintf("spec.metrics[%d]", i)
	x := &exposed{index: i, name: mc.Name, help: strings.TrimSpace(mc.Help), kind: mc.Kind, dimension: mc.Dimension}
	var errs []error
	if !metricName.MatchString(mc.Name) {
		errs = append(errs, fmt.Errorf("%s.name: %q is not a Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)", field, mc.Name))
	}
	switch x.dimension {
	case "":
		x.dimension = kwokv1alpha1.MetricDimensionNode
	case kwokv1alpha1.MetricDimensionNode, kwokv1alpha1.MetricDimensionPod, kwokv1alpha1.MetricDimensionContainer:
	default:
		errs = append(errs, fmt.Errorf("%s.dimension: %q is none of node, pod or container", field, mc.Dimension))
	}
	seen := map[string]bool{}
	for j, l := range mc.Labels {
		lf := fmt.Sprintf("%s.labels[%d]", field, j)
		switch {
		case !labelName.MatchString(l.Name) || strings.HasPrefix(l.Name, "__"):
			errs = append(errs, fmt.Errorf("%s.name: %q is not a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, not starting with __)", lf, l.Name))
		case l.Name == "le" && mc.Kind == kwokv1alpha1.MetricKindHistogram:
			errs = append(errs, fmt.Errorf("%s.name: le is a histogram's bucket label; choose another name", lf))
		case seen[l.Name]:
			errs = append(errs, fmt.Errorf("%s.name: %q is given twice", lf, l.Name))
		}
		seen[l.Name] = true
		p, err := e.env.Compile(l.Value)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s.value: %w", lf, err))
		}
		x.labels = append(x.labels, exposedLabel{name: l.Name, value: p})
	}
	switch mc.Kind {
	case kwokv1alpha1.MetricKindGauge, kwokv1alpha1.MetricKindCounter:
		p, err := e.env.Compile(mc.Value)
		if mc.Value == "" {
			err = fmt.Errorf("a %s needs a value, a CEL expression", mc.Kind)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s.value: %w", field, err))
		}
		x.value = p
	case kwokv1alpha1.MetricKindHistogram:
		if len(mc.Buckets) == 0 {
			errs = append(errs, fmt.Errorf("%s.buckets: a histogram needs buckets, each a le and a value (its count)", field))
		}
		les := map[float64]bool{}
		for j, b := range mc.Buckets {
			bf := fmt.Sprintf("%s.buckets[%d]", field, j)
			if b.Le < 0 || les[b.Le] {
				errs = append(errs, fmt.Errorf("%s.le: %v is negative or another bucket's; give each bucket its own le of 0 or more", bf, b.Le))
			}
			les[b.Le] = true
			p, err := e.env.Compile(b.Value)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s.value: %w", bf, err))
			}
			x.buckets = append(x.buckets, exposedBucket{le: b.Le, hidden: b.Hidden, count: p})
		}
		slices.SortFunc(x.buckets, func(a, b exposedBucket) int { return cmp.Compare(a.le, b.le) })
	default:
		errs = append(errs, fmt.Errorf("%s.kind: %q is none of gauge, counter or histogram", field, mc.Kind))
	}
	return x, joinErrors(errs)
}

// joinErrors is errs on one line, as a condition's message and an Event
// are read: "; " between them, nil for none.
func joinErrors(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, len(errs))
	for i, err := range errs {
		msgs[i] = err.Error()
	}
	return errors.New(strings.Join(msgs, "; "))
}
