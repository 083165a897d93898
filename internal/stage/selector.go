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
	exprs       []requirement
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
	for i, r := range s.MatchExpressions {
		field := fmt.Sprintf("spec.selector.matchExpressions[%d]", i)
		switch r.Operator {
		case v1alpha1.SelectorOpIn, v1alpha1.SelectorOpNotIn:
			if len(r.Values) == 0 {
				return nil, fmt.Errorf("%s.values: required for operator %s", field, r.Operator)
			}
		case v1alpha1.SelectorOpExists, v1alpha1.SelectorOpDoesNotExist:
			if len(r.Values) != 0 {
				return nil, fmt.Errorf("%s.values: must be empty for operator %s", field, r.Operator)
			}
		default:
			return nil, fmt.Errorf("%s.operator: %q is not one of In, NotIn, Exists, DoesNotExist", field, r.Operator)
		}
		key, err := compileExpr(field+".key", r.Key)
		if err != nil {
			return nil, err
		}
		out.exprs = append(out.exprs, requirement{key: key, op: r.Operator, values: r.Values})
	}
	return out, nil
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
