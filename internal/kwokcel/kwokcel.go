// Package kwokcel is the CEL environment KWOK's manifests are written for:
// an object seen as `self` (JSON-like maps) and KWOK's functions — Now,
// Rand, SinceSecond, UnixSecond and Quantity — on cel-go, the library the
// API server's own CEL runs on. Every evaluation has a cost budget, so an
// expression from whoever may apply a Stage cannot hold the simulator.
package kwokcel

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/ext"
	"k8s.io/apimachinery/pkg/api/resource"
)

// CostLimit bounds one evaluation, in cel-go's cost units (about one per
// operation). The API server allows a validation rule a million per call
// (its PerCallLimit); KWOK's selectors take a few dozen.
const CostLimit = 1_000_000

// UsageCostLimit bounds one evaluation of a usage or metric expression
// (NewUsageEnv, NewMetricEnv). Those run on every read of the metrics —
// each HPA sync, kubectl top, scrape — once per pod and resource, not once
// per write as a Stage's do: KWOK's own cost 4 to 5, a loop over a few
// hundred containers or annotations stays under 10,000, and 10,000 is
// 1–3 ms at the 4–10 million units a second cel-go runs here.
const UsageCostLimit = 10_000

// ErrOverBudget marks an evaluation stopped at its cost limit.
var ErrOverBudget = errors.New("CEL expression ran past its cost limit")

// Program is a compiled expression.
type Program struct {
	src   string
	prg   cel.Program
	limit uint64 // its cost limit
	// vars are the variables it reads.
	vars map[string]bool
	// fields are the fields it reads of the object variables.
	fields map[string]*Fields
}

// Reads reports whether the expression reads the variable name: one it
// does not read need not be made.
func (p *Program) Reads(name string) bool { return p.vars[name] }

// Fields are the fields it reads of the object variable name (pod, node,
// container); nil if it does not read it.
func (p *Program) Fields(name string) *Fields { return p.fields[name] }

// objectNames are the variables Fields are known of.
var objectNames = map[string]bool{"pod": true, "node": true, "container": true}

func readVariables(ast *cel.Ast) map[string]bool {
	vars := map[string]bool{}
	for _, r := range ast.NativeRep().ReferenceMap() {
		if len(r.OverloadIDs) == 0 && r.Value == nil {
			vars[r.Name] = true
		}
	}
	return vars
}

// Compile parses and checks src. The error says what is wrong with the
// expression, for the caller to prefix with the field it came from.
func Compile(src string) (*Program, error) {
	env, err := environment()
	if err != nil {
		return nil, err
	}
	p, _, err := compile(env, src, CostLimit)
	return p, err
}

// compile checks src in env, so an expression that names no such function
// or does not parse is refused at once, and plans it as parsed, each call
// dispatched on the values it gets. The checker's inference over dyn
// values can bind an index to the wrong overload:
// int(self.metadata.annotations['n']) would be planned as int(int) and
// fail on the string it reads.
func compile(env *cel.Env, src string, limit uint64) (*Program, *cel.Ast, error) {
	parsed, iss := env.Parse(src)
	var checked *cel.Ast
	if iss.Err() == nil {
		checked, iss = env.Check(parsed)
	}
	if iss.Err() != nil {
		return nil, nil, fmt.Errorf("CEL expression %q: %s", src, strings.ReplaceAll(iss.Err().Error(), "\n", " "))
	}
	prg, err := env.Program(parsed, cel.CostLimit(limit), cel.InterruptCheckFrequency(100))
	if err != nil {
		return nil, nil, fmt.Errorf("CEL expression %q: %w", src, err)
	}
	p := &Program{src: src, prg: prg, limit: limit, vars: readVariables(checked), fields: readFields(checked.NativeRep().Expr(), objectNames)}
	return p, checked, nil
}

// Eval evaluates the program with self bound to obj. A result of an
// expression that reads a field the object lacks is an error, as CEL has it
// (guard with has()); one over the budget wraps ErrOverBudget.
func (p *Program) Eval(obj map[string]any) (ref.Val, error) {
	return p.evalVars(map[string]any{"self": obj})
}

func (p *Program) evalVars(vars map[string]any) (ref.Val, error) {
	v, _, err := p.evalCost(vars)
	return v, err
}

// evalCost is evalVars and what the evaluation cost, in cel-go's units.
func (p *Program) evalCost(vars map[string]any) (ref.Val, uint64, error) {
	v, details, err := p.prg.ContextEval(context.Background(), vars)
	var cost uint64
	if details != nil && details.ActualCost() != nil {
		cost = *details.ActualCost()
	}
	if err != nil {
		if strings.Contains(err.Error(), "cost limit") {
			// It cost the limit at least, whatever was counted.
			return nil, max(cost, p.limit), fmt.Errorf("%w (%d): %q", ErrOverBudget, p.limit, p.src)
		}
		return nil, cost, err
	}
	return v, cost, nil
}

// Bool evaluates a condition. Anything but true is false.
func (p *Program) Bool(obj map[string]any) (bool, error) {
	v, err := p.Eval(obj)
	if err != nil {
		return false, err
	}
	b, ok := v.(types.Bool)
	return ok && bool(b), nil
}

// String evaluates a value and writes it as the jq path would: strings as
// they are, timestamps in RFC 3339, durations as Go writes them, numbers
// in decimal; "" for null.
func (p *Program) String(obj map[string]any) (string, error) {
	return p.Text(map[string]any{"self": obj})
}

// Text is String with the variables of the environment bound (a Metric's
// label: `pod.metadata.name`).
func (p *Program) Text(vars map[string]any) (string, error) {
	v, err := p.evalVars(vars)
	if err != nil {
		return "", err
	}
	switch v := v.(type) {
	case types.String:
		return string(v), nil
	case types.Timestamp:
		return v.UTC().Format(time.RFC3339Nano), nil
	case types.Duration:
		return v.Duration.String(), nil
	case types.Null:
		return "", nil
	}
	if s, ok := v.ConvertToType(types.StringType).(types.String); ok {
		return string(s), nil
	}
	return fmt.Sprint(v.Value()), nil
}

// environment is built once: building one costs milliseconds, and it is
// safe for concurrent use.
var environment = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(append(kwokFunctions(), cel.Variable("self", cel.DynType))...)
})

// kwokFunctions are KWOK's functions every environment has. Quantity is a
// number here, not KWOK's Quantity type: arithmetic with it takes numbers
// (Quantity("100m") * 2.0; CEL has no implicit conversion of 2, and its
// operators take no further overloads).
func kwokFunctions() []cel.EnvOption {
	return []cel.EnvOption{
		ext.Strings(),
		cel.Function("Now",
			cel.Overload("kwok_now", nil, cel.TimestampType,
				cel.FunctionBinding(func(...ref.Val) ref.Val { return types.Timestamp{Time: time.Now()} }))),
		cel.Function("Rand",
			cel.Overload("kwok_rand", nil, cel.DoubleType,
				cel.FunctionBinding(func(...ref.Val) ref.Val { return types.Double(rand.Float64()) }))),
		cel.Function("SinceSecond",
			cel.Overload("kwok_since_second", []*cel.Type{cel.DynType}, cel.DoubleType, cel.UnaryBinding(sinceSecond)),
			cel.MemberOverload("kwok_object_since_second", []*cel.Type{cel.DynType}, cel.DoubleType, cel.UnaryBinding(sinceSecond))),
		cel.Function("UnixSecond",
			cel.Overload("kwok_unix_second", []*cel.Type{cel.TimestampType}, cel.DoubleType, cel.UnaryBinding(unixSecond)),
			cel.MemberOverload("kwok_timestamp_unix_second", []*cel.Type{cel.TimestampType}, cel.DoubleType, cel.UnaryBinding(unixSecond))),
		cel.Function("Quantity",
			cel.Overload("kwok_quantity", []*cel.Type{cel.StringType}, cel.DoubleType, cel.UnaryBinding(quantity))),
	}
}

// sinceSecond is how many seconds ago the object was created.
func sinceSecond(v ref.Val) ref.Val {
	m, ok := v.(traits.Mapper)
	if !ok {
		return types.NewErr("SinceSecond: want an object, got %s", v.Type().TypeName())
	}
	meta, found := m.Find(types.String("metadata"))
	if !found {
		return types.NewErr("SinceSecond: the object has no metadata")
	}
	mm, ok := meta.(traits.Mapper)
	if !ok {
		return types.NewErr("SinceSecond: metadata is not an object")
	}
	created, found := mm.Find(types.String("creationTimestamp"))
	if !found {
		return types.NewErr("SinceSecond: the object has no metadata.creationTimestamp")
	}
	s, ok := created.(types.String)
	if !ok {
		return types.NewErr("SinceSecond: metadata.creationTimestamp is not a time")
	}
	t, err := time.Parse(time.RFC3339, string(s))
	if err != nil {
		return types.NewErr("SinceSecond: metadata.creationTimestamp: %v", err)
	}
	return types.Double(time.Since(t).Seconds())
}

func unixSecond(v ref.Val) ref.Val {
	t, ok := v.(types.Timestamp)
	if !ok {
		return types.NewErr("UnixSecond: want a timestamp")
	}
	return types.Double(float64(t.UnixNano()) / float64(time.Second))
}

// quantity is a resource quantity ("250m", "1Gi") as the number it is, so
// quantities add, scale and compare with CEL's own arithmetic.
func quantity(v ref.Val) ref.Val {
	s, ok := v.(types.String)
	if !ok {
		return types.NewErr("Quantity: want a string")
	}
	q, err := resource.ParseQuantity(string(s))
	if err != nil {
		return types.NewErr("Quantity(%q): %v", string(s), err)
	}
	return types.Double(q.AsApproximateFloat64())
}
