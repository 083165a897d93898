package stage

import (
	"fmt"
	"slices"

	"github.com/kubesim/kubesim/apis/kwok/v1alpha1"
)

// selector is a compiled StageSelector.
type selector struct {
	labels      map[string]string
	annotations map[string]string
	exprs       []condition
}

// condition is one compiled matchExpressions item: a jq requirement or a
// CEL expression.
type condition interface {
	matches(obj map[string]any) (bool, error)
}

type requirement struct {
	key    *expr
	op     v1alpha1.SelectorOperator
	values []string
}

func compileSelector(s *v1alpha1.StageSelector) (*selector, error) {
	if s == nil {
		return &selector{}, nil
	}
	out := &selector{labels: s.MatchLabels, annotations: s.MatchAnnotations}
	for i, e := range s.MatchExpressions {
		field := fmt.Sprintf("spec.selector.matchExpressions[%d]", i)
		c, err := compileCondition(field, e)
		if err != nil {
			return nil, err
		}
		out.exprs = append(out.exprs, c)
	}
	return out, nil
}

// compileCondition compiles one matchExpressions item, which must be
// exactly one of cel, jq or (the older form) key/operator/values.
func compileCondition(field string, e v1alpha1.MatchExpression) (condition, error) {
	forms := 0
	for _, set := range []bool{e.CEL != nil, e.JQ != nil, e.Key != ""} {
		if set {
			forms++
		}
	}
	if forms != 1 {
		return nil, fmt.Errorf("%s: write exactly one of cel, jq or key", field)
	}
	switch {
	case e.CEL != nil:
		return compileCELCondition(field+".cel.expression", e.CEL.Expression)
	case e.JQ != nil:
		return compileRequirement(field+".jq", e.JQ.Key, e.JQ.Operator, e.JQ.Values)
	default:
		return compileRequirement(field, e.Key, e.Operator, e.Values)
	}
}

func compileRequirement(field, key string, op v1alpha1.SelectorOperator, values []string) (condition, error) {
	switch op {
	case v1alpha1.SelectorOpIn, v1alpha1.SelectorOpNotIn:
		if len(values) == 0 {
			return nil, fmt.Errorf("%s.values: required for operator %s", field, op)
		}
	case v1alpha1.SelectorOpExists, v1alpha1.SelectorOpDoesNotExist:
		if len(values) != 0 {
			return nil, fmt.Errorf("%s.values: must be empty for operator %s", field, op)
		}
	default:
		return nil, fmt.Errorf("%s.operator: %q is not one of In, NotIn, Exists, DoesNotExist", field, op)
	}
	k, err := compileExpr(field+".key", key)
	if err != nil {
		return nil, err
	}
	return requirement{key: k, op: op, values: values}, nil
}

// matches reports whether obj is selected. An expression that runs past
// its limit counts as no match, and is returned.
func (s *selector) matches(obj map[string]any) (bool, error) {
	meta, _ := obj["metadata"].(map[string]any)
	if !mapContains(meta["labels"], s.labels) || !mapContains(meta["annotations"], s.annotations) {
		return false, nil
	}
	for _, r := range s.exprs {
		if ok, err := r.matches(obj); !ok {
			return false, err
		}
	}
	return true, nil
}

// matches applies the operator to every value the key expression yields
// before it ends or fails: In wants one of them among Values, NotIn none;
// Exists wants a non-null one, DoesNotExist none. Running past the limit
// is no match, whatever the operator.
func (r requirement) matches(obj map[string]any) (bool, error) {
	found, present := false, false
	err := r.key.each(obj, func(v any) bool {
		if v != nil {
			present = true
			found = found || slices.Contains(r.values, toString(v))
		}
		return true
	})
	if err != nil {
		return false, err
	}
	switch r.op {
	case v1alpha1.SelectorOpIn:
		return found, nil
	case v1alpha1.SelectorOpNotIn:
		return !found, nil
	case v1alpha1.SelectorOpExists:
		return present, nil
	default:
		return !present, nil
	}
}

func mapContains(m any, want map[string]string) bool {
	if len(want) == 0 {
		return true
	}
	have, _ := m.(map[string]any)
	for k, v := range want {
		if s, ok := have[k].(string); !ok || s != v {
			return false
		}
	}
	return true
}
