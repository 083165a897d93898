package stage

import (
	"errors"
	"fmt"

	"github.com/kubesim/kubesim/apis/kwok/v1alpha1"
	"github.com/kubesim/kubesim/internal/kwokcel"
)

// celExpr is a CEL expression of a Stage, with the field it came from. As
// with jq, an evaluation that fails on what the object lacks (a field not
// there) is quietly no match or no value; one that runs past the budget is
// returned, for the Stage's author to be told.
type celExpr struct {
	field string
	prg   *kwokcel.Program
}

func compileCEL(field, src string) (*celExpr, error) {
	prg, err := kwokcel.Compile(src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	return &celExpr{field: field, prg: prg}, nil
}

func compileCELCondition(field, src string) (condition, error) {
	return compileCEL(field, src)
}

func (c *celExpr) matches(obj map[string]any) (bool, error) {
	ok, err := c.prg.Bool(obj)
	return ok, c.fault(err)
}

func (c *celExpr) first(obj map[string]any) (string, error) {
	v, err := c.prg.String(obj)
	return v, c.fault(err)
}

// fault keeps only the errors an author must hear of.
func (c *celExpr) fault(err error) error {
	if errors.Is(err, kwokcel.ErrOverBudget) {
		return fmt.Errorf("%s: %w", c.field, err)
	}
	return nil
}

// valueExpr reads one value from an object, as a string: a delay, a
// weight.
type valueExpr interface {
	first(obj map[string]any) (string, error)
}

// compileValue compiles an optional value expression: cel, jq, or the
// older expressionFrom (jq). nil if none is set.
func compileValue(field string, src *v1alpha1.ExpressionFromSource) (valueExpr, error) {
	switch {
	case src == nil:
		return nil, nil
	case src.CEL != nil:
		return compileCEL(field+".cel.expression", src.CEL.Expression)
	case src.JQ != nil:
		return compileExpr(field+".jq.expression", src.JQ.Expression)
	case src.ExpressionFrom != "":
		return compileExpr(field+".expressionFrom", src.ExpressionFrom)
	}
	return nil, nil
}
