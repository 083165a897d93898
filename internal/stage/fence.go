package stage

import (
	"fmt"
	"reflect"
	"text/template"
	"text/template/parse"
	"time"
)

// A Stage's template is code run inside the simulator, and Go's
// text/template can neither be cancelled nor be told to stop after so
// many steps: `{{ range 100000 }}{{ range 100000 }}{{ end }}{{ end }}`
// would keep a worker busy for hours. So every render is fenced, by counts
// (the same answer for an object however busy the machine is):
//
//   - its output stops at maxRender (cappedBuffer), and no helper makes a
//     value past maxRender (bound, and fence.wrap on every helper);
//   - it takes at most maxRenderSteps steps: an iteration of a range, an
//     entry into a template (`template`, `block`, and the render itself)
//     and a call of a helper are one step each;
//   - its helpers take and make at most maxRenderBytes bytes in all;
//
// and, for what the counts cannot see (a builtin such as eq comparing two
// strings of a MiB, once a step), a render that is still running after
// maxRenderTime stops at its next step. A render that stops fails with
// errFenced, as a failed render of that object (a StageFailed Event); its
// work is not left running.
const (
	// maxRenderSteps is a thousand times what KWOK's and kubesim's
	// built-in stages take (a few dozen to a few hundred steps); a million
	// steps take some 0.1-0.5 s.
	maxRenderSteps = 1 << 20
	// maxRenderBytes is what the helpers of one render may take as
	// arguments and make as results, all calls together: 64 values of the
	// largest size, or a million calls of some 64 bytes.
	maxRenderBytes = 64 << 20
	// checkTimeEvery is how many steps go between looks at the clock.
	checkTimeEvery = 256
	// maxValueDepth is how deep a value a helper takes or makes may nest;
	// deeper counts as past maxRender (a dict set into itself is
	// infinitely deep).
	maxValueDepth = 1000
)

// maxRenderTime is the backstop: far more than any count above takes on
// an idle machine. A variable so that tests of the counts on a busy one
// can move it out of their way.
var maxRenderTime = 2 * time.Second

// errFenced is the error of every render a fence stops; errors.Is tells
// them apart from a template's own failure.
var errFenced = fmt.Errorf("template ran past its fence")

var (
	errTooManySteps = fmt.Errorf("%w: more than %d steps (range iterations, template calls, helper calls)", errFenced, maxRenderSteps)
	errTooManyBytes = fmt.Errorf("%w: its helpers took and made more than %d bytes", errFenced, maxRenderBytes)
	errTooSlow      = fmt.Errorf("%w: still running after %v", errFenced, maxRenderTime)
)

// stepFunc is the helper a step of a range or a template calls: injected
// by instrument, bound per clone by fence.funcs.
const stepFunc = "_kubesimStep"

// fence is the budget of one render. Each pooled clone of a template has
// its own, its helpers bound to it, so a render spends only its own; render
// resets it.
type fence struct {
	steps, bytes int // left
	deadline     time.Time
	funcs        template.FuncMap
}

func newFence() *fence {
	f := &fence{}
	f.funcs = template.FuncMap{stepFunc: f.step}
	for name, fn := range staticFuncs {
		f.funcs[name] = f.wrap(fn)
	}
	return f
}

func (f *fence) reset() {
	f.steps, f.bytes = maxRenderSteps, maxRenderBytes
	f.deadline = time.Now().Add(maxRenderTime)
}

// charge spends one step and n bytes.
func (f *fence) charge(n int) error {
	f.steps--
	f.bytes -= n
	switch {
	case f.steps < 0:
		return errTooManySteps
	case f.bytes < 0:
		return errTooManyBytes
	case f.steps%checkTimeEvery == 0 && time.Now().After(f.deadline):
		return errTooSlow
	}
	return nil
}

// step is what an iteration of a range, or an entry into a template,
// calls: false, so the if it stands in renders nothing.
func (f *fence) step() (bool, error) { return false, f.charge(0) }

// settle charges a helper's call: one step, and the sizes of what it took
// and made; a result past maxRender is refused.
func (f *fence) settle(in int, out ...any) error {
	left := min(f.bytes, maxRender) + 1
	for _, v := range out {
		n := sizeOf(v, left)
		if n > maxRender {
			f.charge(in + n)
			return errTooLarge
		}
		in += n
	}
	return f.charge(in)
}

// wrap is fn, settling each call with f. The signatures most templates
// call (Quote, printf, the string helpers) are wrapped without reflection.
func (f *fence) wrap(fn any) any {
	switch fn := fn.(type) {
	case func() string:
		return func() (string, error) {
			s := fn()
			return s, f.settle(0, s)
		}
	case func(any) string:
		return func(v any) (string, error) {
			in := sizeOf(v, maxRender+1)
			if in > maxRender {
				return "", errTooLarge
			}
			s := fn(v)
			return s, f.settle(in, s)
		}
	case func(string) string:
		return func(v string) (string, error) {
			s := fn(v)
			return s, f.settle(len(v), s)
		}
	case func(string, string) string:
		return func(a, b string) (string, error) {
			s := fn(a, b)
			return s, f.settle(len(a)+len(b), s)
		}
	case func(string, ...any) (string, error):
		return func(format string, args ...any) (string, error) {
			in, err := sizesOf(args)
			if err != nil {
				return "", err
			}
			s, err := fn(format, args...)
			if err != nil {
				return "", err
			}
			return s, f.settle(len(format)+in, s)
		}
	case func(...any) string:
		return func(args ...any) (string, error) {
			in, err := sizesOf(args)
			if err != nil {
				return "", err
			}
			s := fn(args...)
			return s, f.settle(in, s)
		}
	}
	return f.wrapReflect(reflect.ValueOf(fn))
}

// wrapReflect wraps any other helper: the sizes of its arguments and
// results are charged; an error (or a panic, which text/template turns
// into one) from the fence ends the render.
func (f *fence) wrapReflect(fn reflect.Value) any {
	typ := fn.Type()
	return reflect.MakeFunc(typ, func(args []reflect.Value) []reflect.Value {
		in := 0
		for _, a := range args {
			n := sizeOf(valueOf(a), maxRender+1)
			if n > maxRender {
				panic(errTooLarge)
			}
			in += n
		}
		var out []reflect.Value
		if typ.IsVariadic() {
			out = fn.CallSlice(args)
		} else {
			out = fn.Call(args)
		}
		results := make([]any, 0, len(out))
		for _, v := range out {
			results = append(results, valueOf(v))
		}
		if err := f.settle(in, results...); err != nil {
			panic(err)
		}
		return out
	}).Interface()
}

func valueOf(v reflect.Value) any {
	if !v.IsValid() || !v.CanInterface() {
		return nil
	}
	return v.Interface()
}

// sizesOf is the sum of the sizes of args, each at most maxRender.
func sizesOf(args []any) (int, error) {
	in := 0
	for _, a := range args {
		n := sizeOf(a, maxRender+1)
		if n > maxRender {
			return 0, errTooLarge
		}
		in += n
	}
	return in, nil
}

// sizeOf is about how many bytes v takes, fully expanded (a list holding
// one list twice counts it twice, as printing it would): a string its
// length, anything else 8 bytes, plus its elements' and keys'. It stops
// counting past limit, and counts a value nested past maxValueDepth as
// past limit, so it ends on a value that holds itself.
func sizeOf(v any, limit int) int {
	n := 0
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		if n > limit {
			return
		}
		if depth > maxValueDepth {
			n = limit + 1
			return
		}
		switch v := v.(type) {
		case nil:
		case string:
			n += len(v)
		case bool, int, int64, float64, time.Time, time.Duration, error:
			n += 8
		case []any:
			n += 8 * len(v)
			for _, e := range v {
				walk(e, depth+1)
			}
		case map[string]any:
			for k, e := range v {
				n += len(k) + 8
				walk(e, depth+1)
			}
		case []string:
			for _, e := range v {
				n += len(e) + 8
			}
		case []int:
			n += 8 * len(v)
		case map[string]string:
			for k, e := range v {
				n += len(k) + len(e) + 8
			}
		default:
			r := reflect.ValueOf(v)
			switch r.Kind() {
			case reflect.String:
				n += r.Len()
			case reflect.Slice, reflect.Array:
				n += 8 * r.Len()
				for i := 0; i < r.Len() && n <= limit; i++ {
					walk(valueOf(r.Index(i)), depth+1)
				}
			case reflect.Map:
				for it := r.MapRange(); it.Next() && n <= limit; {
					walk(valueOf(it.Key()), depth+1)
					walk(valueOf(it.Value()), depth+1)
				}
			default:
				n += 8
			}
		}
	}
	walk(v, 0)
	return n
}

// instrument makes every template of t (its own and those it defines)
// take a step each time it is entered, and every range a step each
// iteration: nothing else in text/template repeats. It changes the parse
// trees, before t is first cloned; clones share them.
func instrument(t *template.Template) {
	for _, tt := range t.Templates() {
		if tt.Tree == nil || tt.Tree.Root == nil {
			continue
		}
		root := tt.Tree.Root
		instrumentList(tt.Tree, root)
		root.Nodes = append([]parse.Node{stepNode(tt.Tree, root.Pos, 1)}, root.Nodes...)
	}
}

func instrumentList(tree *parse.Tree, list *parse.ListNode) {
	if list == nil {
		return
	}
	for _, n := range list.Nodes {
		switch n := n.(type) {
		case *parse.RangeNode:
			instrumentList(tree, n.List)
			instrumentList(tree, n.ElseList)
			if n.List == nil {
				n.List = &parse.ListNode{NodeType: parse.NodeList, Pos: n.Pos}
			}
			n.List.Nodes = append([]parse.Node{stepNode(tree, n.Pos, n.Line)}, n.List.Nodes...)
		case *parse.IfNode:
			instrumentList(tree, n.List)
			instrumentList(tree, n.ElseList)
		case *parse.WithNode:
			instrumentList(tree, n.List)
			instrumentList(tree, n.ElseList)
		case *parse.ListNode:
			instrumentList(tree, n)
		}
	}
}

// stepNode is `{{ if _kubesimStep }}{{ end }}` at pos: a step that
// renders nothing, and whose error points at the range it counts.
func stepNode(tree *parse.Tree, pos parse.Pos, line int) parse.Node {
	id := parse.NewIdentifier(stepFunc).SetTree(tree).SetPos(pos)
	cmd := &parse.CommandNode{NodeType: parse.NodeCommand, Pos: pos, Args: []parse.Node{id}}
	pipe := &parse.PipeNode{NodeType: parse.NodePipe, Pos: pos, Line: line, Cmds: []*parse.CommandNode{cmd}}
	return &parse.IfNode{BranchNode: parse.BranchNode{
		NodeType: parse.NodeIf, Pos: pos, Line: line, Pipe: pipe,
		List: &parse.ListNode{NodeType: parse.NodeList, Pos: pos},
	}}
}
