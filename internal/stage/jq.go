package stage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/itchyny/gojq"
)

// maxSteps bounds one run of a Stage's jq expression: a million steps of
// gojq's machine take some 10-100 ms, thousands of times what the selectors
// of KWOK's stages need, and stop a `def f: f; f` that would loop forever.
const maxSteps = 1 << 20

var errOverBudget = fmt.Errorf("jq expression ran past its limit of %d steps", maxSteps)

// Fault is a stage's jq expression that ran past maxSteps on an object: it
// counted as no match, or no value, for that object. Its Stage's author is
// to be told.
type Fault struct {
	Stage *Stage
	Err   error // names the field and the limit
}

func (f *Fault) Error() string { return fmt.Sprintf("stage %s: %v", f.Stage.Name, f.Err) }

// expr is a compiled jq expression of a Stage, with the field it came from.
type expr struct {
	field string
	code  *gojq.Code
}

func compileExpr(field, src string) (*expr, error) {
	q, err := gojq.Parse(src)
	if err != nil {
		return nil, fmt.Errorf("%s: jq expression %q: %w", field, src, err)
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return nil, fmt.Errorf("%s: jq expression %q: %w", field, src, err)
	}
	return &expr{field: field, code: code}, nil
}

// each hands yield the values the expression yields for obj, until they
// end, yield returns false or the expression fails. A failure ends them
// quietly — a path into what is not there (.status.conditions[] of a new
// node) yields nothing more, as KWOK's stages expect — unless it is
// running past maxSteps: that is returned.
func (e *expr) each(obj map[string]any, yield func(v any) bool) error {
	iter := e.code.RunWithContext(&budget{Context: context.Background(), left: maxSteps}, obj)
	for {
		v, ok := iter.Next()
		if !ok {
			return nil
		}
		if err, isErr := v.(error); isErr {
			if errors.Is(err, errOverBudget) {
				return fmt.Errorf("%s: %w", e.field, err)
			}
			return nil
		}
		if !yield(v) {
			return nil
		}
	}
}

// first is the first non-null value the expression yields for obj, as a
// string; "" if there is none.
func (e *expr) first(obj map[string]any) (string, error) {
	var out string
	err := e.each(obj, func(v any) bool {
		if v == nil {
			return true
		}
		out = toString(v)
		return false
	})
	return out, err
}

// budget is the context of one jq run. gojq looks at its context's Done
// channel before every step of its machine, so counting those looks
// bounds the run: a count, unlike a deadline, gives an object the same
// answer however busy the machine is, and costs no timer.
type budget struct {
	context.Context // Background: no deadline, no values
	left            int
}

// exhausted is the Done channel of a spent budget.
var exhausted = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

func (b *budget) Done() <-chan struct{} {
	if b.left--; b.left < 0 {
		return exhausted
	}
	return nil // never ready: gojq takes the next step
}

func (b *budget) Err() error {
	if b.left < 0 {
		return errOverBudget
	}
	return nil
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
