package kwokcel

import (
	"maps"

	"github.com/google/cel-go/common/ast"
)

// Fields are the fields of an object variable (pod, node, container) an
// expression can reach, from its checked syntax tree: each chain of field
// selections from the variable (pod.metadata.annotations) keeps the
// field it ends at, whole. A variable used otherwise (compared, passed
// to a function, indexed) keeps the whole object, except as the object of
// SinceSecond (its creationTimestamp) or of Usage and CumulativeUsage (its
// kind, name and namespace): what those functions read. An object kept to
// these fields reads the same in the expression as the whole object, and
// is much smaller than a pod with its status.
type Fields struct {
	all bool
	sub map[string]*Fields
}

// Add keeps the field at path (and all under it) as well.
func (f *Fields) Add(path ...string) {
	for _, name := range path {
		if f.all {
			return
		}
		if f.sub == nil {
			f.sub = map[string]*Fields{}
		}
		next := f.sub[name]
		if next == nil {
			next = &Fields{}
			f.sub[name] = next
		}
		f = next
	}
	f.all, f.sub = true, nil
}

// Merge keeps what o keeps as well, under path.
func (f *Fields) Merge(o *Fields, path ...string) {
	if o == nil {
		return
	}
	if o.all {
		f.Add(path...)
		return
	}
	for name, sub := range o.sub {
		f.Merge(sub, append(path[:len(path):len(path)], name)...)
	}
}

// Keep is v with only the fields f keeps: maps are copied with those keys
// alone, each element of a list as the list's fields say; what f keeps
// whole is shared, not copied. A nil f keeps nothing of a map.
func (f *Fields) Keep(v any) any {
	if f != nil && f.all {
		return v
	}
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		if f != nil {
			for name, sub := range f.sub {
				if fv, ok := v[name]; ok {
					out[name] = sub.Keep(fv)
				}
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = f.Keep(e)
		}
		return out
	}
	return v
}

// Clone is a copy of f that changes apart from it.
func (f *Fields) Clone() *Fields {
	if f == nil {
		return nil
	}
	c := &Fields{all: f.all}
	if f.sub != nil {
		c.sub = make(map[string]*Fields, len(f.sub))
		for name, sub := range f.sub {
			c.sub[name] = sub.Clone()
		}
	}
	return c
}

// Equal reports whether f and o keep the same fields.
func (f *Fields) Equal(o *Fields) bool {
	if f == nil || o == nil {
		return f == o
	}
	return f.all == o.all && maps.EqualFunc(f.sub, o.sub, (*Fields).Equal)
}

// fieldReaders are the functions taking an object that read only some of
// its fields, and which.
var fieldReaders = map[string][][]string{
	"SinceSecond":     {{"metadata", "creationTimestamp"}},
	"Usage":           {{"kind"}, {"metadata", "name"}, {"metadata", "namespace"}},
	"CumulativeUsage": {{"kind"}, {"metadata", "name"}, {"metadata", "namespace"}},
}

// readFields are the fields of each of the variables names the expression
// reads; a variable it does not read has none.
func readFields(e ast.Expr, names map[string]bool) map[string]*Fields {
	out := map[string]*Fields{}
	of := func(name string) *Fields {
		if out[name] == nil {
			out[name] = &Fields{}
		}
		return out[name]
	}
	var walk func(e ast.Expr)
	walk = func(e ast.Expr) {
		switch e.Kind() {
		case ast.IdentKind:
			if name := e.AsIdent(); names[name] {
				of(name).Add()
			}
		case ast.SelectKind:
			var path []string
			x := e
			for x.Kind() == ast.SelectKind {
				path = append([]string{x.AsSelect().FieldName()}, path...)
				x = x.AsSelect().Operand()
			}
			if x.Kind() == ast.IdentKind && names[x.AsIdent()] {
				of(x.AsIdent()).Add(path...)
				return
			}
			walk(x)
		case ast.CallKind:
			call := e.AsCall()
			args := call.Args()
			if call.IsMemberFunction() {
				args = append([]ast.Expr{call.Target()}, args...)
			}
			if reads, ok := fieldReaders[call.FunctionName()]; ok && len(args) > 0 &&
				args[0].Kind() == ast.IdentKind && names[args[0].AsIdent()] {
				for _, path := range reads {
					of(args[0].AsIdent()).Add(path...)
				}
				args = args[1:]
			}
			for _, a := range args {
				walk(a)
			}
		case ast.ComprehensionKind:
			c := e.AsComprehension()
			for _, x := range []ast.Expr{c.IterRange(), c.AccuInit(), c.LoopCondition(), c.LoopStep(), c.Result()} {
				walk(x)
			}
		case ast.ListKind:
			for _, x := range e.AsList().Elements() {
				walk(x)
			}
		case ast.MapKind:
			for _, entry := range e.AsMap().Entries() {
				walk(entry.AsMapEntry().Key())
				walk(entry.AsMapEntry().Value())
			}
		case ast.StructKind:
			for _, field := range e.AsStruct().Fields() {
				walk(field.AsStructField().Value())
			}
		}
	}
	walk(e)
	return out
}
