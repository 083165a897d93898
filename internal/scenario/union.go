package scenario

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// kind is one member of a union: the API field that sets it, whose JSON
// name is the kind's name. It is set when that field is not its zero value.
type kind[U any] interface {
	fieldName() string
}

// union is the kinds of an API type of which exactly one field is set: a
// Step's actions, an Assertion's checks. Each kind is declared once, in a
// file of its own, and registered here; the union keeps them in the order
// of the type's fields, which is the order messages list them in.
type union[U any, K kind[U]] struct {
	// noun, whole and split word the messages: "no action", "one action
	// per step (split it into several steps)".
	noun, whole, split string
	kinds              []K
	field              map[string]int // a kind's field in U, by name
}

// register adds a kind; a kind without a field of its name in U is a
// mistake in this package, so it panics.
func (u *union[U, K]) register(k K) {
	i := jsonFieldIndex[U](k.fieldName())
	if i < 0 {
		panic(fmt.Sprintf("scenario: %s kind %q: %T has no field of that name", u.noun, k.fieldName(), *new(U)))
	}
	if u.field == nil {
		u.field = map[string]int{}
	}
	u.field[k.fieldName()] = i
	u.kinds = append(u.kinds, k)
	slices.SortStableFunc(u.kinds, func(a, b K) int {
		return jsonFieldIndex[U](a.fieldName()) - jsonFieldIndex[U](b.fieldName())
	})
}

// setOn are the kinds set on x, in field order.
func (u *union[U, K]) setOn(x *U) []K {
	var out []K
	v := reflect.ValueOf(x).Elem()
	for _, k := range u.kinds {
		if !v.Field(u.field[k.fieldName()]).IsZero() {
			out = append(out, k)
		}
	}
	return out
}

// one is the one kind set on x, or an error saying there is none or more.
func (u *union[U, K]) one(x *U) (K, error) {
	set := u.setOn(x)
	if len(set) == 1 {
		return set[0], nil
	}
	var none K
	if len(set) == 0 {
		return none, fmt.Errorf("no %s; give one of %s", u.noun, strings.Join(u.names(), ", "))
	}
	var names []string
	for _, k := range set {
		names = append(names, k.fieldName())
	}
	return none, fmt.Errorf("has %s; one %s per %s (%s)", strings.Join(names, " and "), u.noun, u.whole, u.split)
}

func (u *union[U, K]) names() []string {
	out := make([]string, len(u.kinds))
	for i, k := range u.kinds {
		out[i] = k.fieldName()
	}
	return out
}

// jsonFieldIndex is the index of U's field with that JSON name, or -1.
func jsonFieldIndex[U any](name string) int {
	t := reflect.TypeFor[U]()
	for i := range t.NumField() {
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); tag == name {
			return i
		}
	}
	return -1
}
