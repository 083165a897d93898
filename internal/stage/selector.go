package stage

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/itchyny/gojq"

	"github.com/kubesim/kubesim/apis/kwok/v1alpha1"
)

// selector is a compiled StageSelector.
type selector struct {
	labels      map[string]string
	annotations map[string]string
	exprs       []requirement
}

type requirement struct {
	key    *gojq.Code
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
		code, err := compileJQ(r.Key)
		if err != nil {
			return nil, fmt.Errorf("%s.key: %w", field, err)
		}
		out.exprs = append(out.exprs, requirement{key: code, op: r.Operator, values: r.Values})
	}
	return out, nil
}

func (s *selector) matches(obj map[string]any) bool {
	meta, _ := obj["metadata"].(map[string]any)
	if !mapContains(meta["labels"], s.labels) || !mapContains(meta["annotations"], s.annotations) {
		return false
	}
	for _, r := range s.exprs {
		if !r.matches(obj) {
			return false
		}
	}
	return true
}

// matches applies the operator to every value the key expression yields
// before it ends or fails: In wants one of them among Values, NotIn none;
// Exists wants a non-null one, DoesNotExist none.
func (r requirement) matches(obj map[string]any) bool {
	found, present := false, false
	iter := r.key.Run(obj)
	for {
		v, ok := iter.Next()
		if !ok {
			break
		}
		if _, isErr := v.(error); isErr {
			// A path into what is not there (.status.conditions[] of a
			// new node) yields nothing more, as KWOK's stages expect.
			break
		}
		if v == nil {
			continue
		}
		present = true
		if slices.Contains(r.values, toString(v)) {
			found = true
		}
	}
	switch r.op {
	case v1alpha1.SelectorOpIn:
		return found
	case v1alpha1.SelectorOpNotIn:
		return !found
	case v1alpha1.SelectorOpExists:
		return present
	default:
		return !present
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

func compileJQ(src string) (*gojq.Code, error) {
	q, err := gojq.Parse(src)
	if err != nil {
		return nil, fmt.Errorf("jq expression %q: %w", src, err)
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return nil, fmt.Errorf("jq expression %q: %w", src, err)
	}
	return code, nil
}

// firstString is the first non-null value the expression yields, as a string.
func firstString(code *gojq.Code, obj map[string]any) (string, bool) {
	iter := code.Run(obj)
	for {
		v, ok := iter.Next()
		if !ok {
			return "", false
		}
		if _, isErr := v.(error); isErr {
			return "", false
		}
		if v != nil {
			return toString(v), true
		}
	}
}

func toString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case int:
		return strconv.Itoa(v)
	case bool:
		return strconv.FormatBool(v)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	default:
		data, _ := json.Marshal(v)
		return string(data)
	}
}

// Normalize makes an object from runtime.DefaultUnstructuredConverter fit
// for jq, which knows int but not int64, in place.
func Normalize(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = Normalize(e)
		}
		return v
	case []any:
		for i, e := range v {
			v[i] = Normalize(e)
		}
		return v
	case int64:
		return int(v)
	case int32:
		return int(v)
	case float32:
		return float64(v)
	default:
		return v
	}
}
