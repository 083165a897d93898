package kwokcel

import (
	"fmt"
	"math"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// Usage expressions (ResourceUsage, ClusterResourceUsage) see the pod,
// its node and the container as `pod`, `node` and `container`, KWOK's
// names, as JSON-like maps. Metric expressions see the same and may read
// usage back with KWOK's Usage and CumulativeUsage; usage expressions may
// not (their usage would be defined by itself: KWOK recurses until its
// stack runs out).

// UsageReader answers Usage and CumulativeUsage: of a pod's container
// (container != ""), of a pod (the sum of its containers), or of a node
// (kind "Node": the sum of its pods). Cumulative usage is in
// resource-seconds (CPU: core-seconds), as a kubelet counts it.
type UsageReader interface {
	Usage(kind, namespace, name, resource, container string, cumulative bool) (float64, error)
}

// Env compiles expressions of one environment.
type Env struct {
	env *cel.Env
}

// NewUsageEnv is the environment of usage expressions.
func NewUsageEnv() (*Env, error) {
	env, err := cel.NewEnv(append(kwokFunctions(), objectVariables()...)...)
	return &Env{env: env}, err
}

// NewMetricEnv is the environment of Metric expressions: the usage
// environment with Usage and CumulativeUsage, read from r.
func NewMetricEnv(r UsageReader) (*Env, error) {
	read := func(cumulative bool) func(args ...ref.Val) ref.Val {
		return func(args ...ref.Val) ref.Val {
			kind, namespace, name, err := objectRef(args[0])
			if err != nil {
				return types.NewErr("%v", err)
			}
			resource, ok := args[1].(types.String)
			if !ok {
				return types.NewErr("the resource name must be a string")
			}
			container := ""
			if len(args) == 3 {
				c, ok := args[2].(types.String)
				if !ok {
					return types.NewErr("the container name must be a string")
				}
				container = string(c)
			}
			v, err := r.Usage(kind, namespace, name, string(resource), container, cumulative)
			if err != nil {
				return types.NewErr("%v", err)
			}
			return types.Double(v)
		}
	}
	fn := func(name string, cumulative bool) cel.EnvOption {
		id := "kwok_" + strings.ToLower(name)
		return cel.Function(name,
			cel.MemberOverload(id+"_object", []*cel.Type{cel.DynType, cel.StringType}, cel.DoubleType, cel.FunctionBinding(read(cumulative))),
			cel.MemberOverload(id+"_container", []*cel.Type{cel.DynType, cel.StringType, cel.StringType}, cel.DoubleType, cel.FunctionBinding(read(cumulative))))
	}
	opts := append(kwokFunctions(), objectVariables()...)
	env, err := cel.NewEnv(append(opts, fn("Usage", false), fn("CumulativeUsage", true))...)
	return &Env{env: env}, err
}

func objectVariables() []cel.EnvOption {
	return []cel.EnvOption{
		cel.Variable("pod", cel.DynType),
		cel.Variable("node", cel.DynType),
		cel.Variable("container", cel.DynType),
	}
}

// objectRef is the kind, namespace and name of an object seen as a map:
// a Node if its kind says so, else a pod.
func objectRef(v ref.Val) (kind, namespace, name string, err error) {
	m, ok := v.(traits.Mapper)
	if !ok {
		return "", "", "", fmt.Errorf("Usage: want a pod or a node, got %s", v.Type().TypeName())
	}
	str := func(m traits.Mapper, key string) string {
		if v, found := m.Find(types.String(key)); found {
			if s, ok := v.(types.String); ok {
				return string(s)
			}
		}
		return ""
	}
	kind = "Pod"
	if str(m, "kind") == "Node" {
		kind = "Node"
	}
	meta, found := m.Find(types.String("metadata"))
	mm, ok := meta.(traits.Mapper)
	if !found || !ok {
		return "", "", "", fmt.Errorf("Usage: the object has no metadata")
	}
	return kind, str(mm, "namespace"), str(mm, "name"), nil
}

// Compile parses and checks src in the environment, and refuses it if
// cel-go's estimate of its cost is over UsageCostLimit. The estimate takes
// the lists, maps and strings of pod, node and container to be empty (their
// sizes are not known): what it refuses is cost the expression spells out
// itself, such as loops in loops over lists it writes, which would run past
// the limit for every pod. Cost that comes of a large pod is left to the
// limit at evaluation.
func (e *Env) Compile(src string) (*Program, error) {
	p, checked, err := compile(e.env, src, UsageCostLimit)
	if err != nil {
		return nil, err
	}
	est, err := e.env.EstimateCost(checked, emptyData{})
	if err != nil {
		return nil, fmt.Errorf("CEL expression %q: estimating its cost: %w", src, err)
	}
	if est.Max > UsageCostLimit {
		return nil, fmt.Errorf("CEL expression %q may cost %d an evaluation, over the limit of %d: loop over fewer or shorter lists", src, est.Max, UsageCostLimit)
	}
	return p, nil
}

// emptyData sizes what the checker cannot (the variables' lists, maps and
// strings) as empty, and leaves calls to cel-go's own estimates.
type emptyData struct{}

func (emptyData) EstimateSize(checker.AstNode) *checker.SizeEstimate {
	return &checker.SizeEstimate{}
}

func (emptyData) EstimateCallCost(string, string, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
	return nil
}

// Number evaluates the program with vars bound and reads the result as
// KWOK does: a number, a whole number, a duration (in nanoseconds) or a
// bool (1 or 0).
func (p *Program) Number(vars map[string]any) (float64, error) {
	f, _, err := p.NumberCost(vars)
	return f, err
}

// NumberCost is Number and what the evaluation cost, in cel-go's units
// (one stopped at the limit cost the limit), for budgets of many.
func (p *Program) NumberCost(vars map[string]any) (float64, uint64, error) {
	v, cost, err := p.evalCost(vars)
	if err != nil {
		return 0, cost, err
	}
	var f float64
	switch v := v.(type) {
	case types.Double:
		f = float64(v)
	case types.Int:
		f = float64(v)
	case types.Uint:
		f = float64(v)
	case types.Duration:
		f = float64(v.Duration)
	case types.Bool:
		if v {
			f = 1
		}
	default:
		return 0, cost, fmt.Errorf("CEL expression %q returned a %s, not a number", p.src, v.Type().TypeName())
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, cost, fmt.Errorf("CEL expression %q returned %v, not a number", p.src, f)
	}
	return f, cost, nil
}
