package scenario

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

// unionFields are the JSON names of U's fields that are kinds: all but
// the fields every member shares (common) and those not in the file.
func unionFields[U any](common ...string) []reflect.StructField {
	var out []reflect.StructField
	t := reflect.TypeFor[U]()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "-" && !slices.Contains(common, name) {
			out = append(out, f)
		}
	}
	return out
}

// withField is a U with only the field f set, to something not empty.
func withField[U any](t *testing.T, f reflect.StructField) *U {
	u := new(U)
	v := reflect.ValueOf(u).Elem().FieldByIndex(f.Index)
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(f.Type.Elem()))
	case reflect.Slice:
		v.Set(reflect.MakeSlice(f.Type, 1, 1))
	case reflect.Map:
		v.Set(reflect.MakeMap(f.Type))
	case reflect.String:
		v.SetString("x")
	default:
		t.Fatalf("%s: a %s field; teach withField to set one", f.Name, v.Kind())
	}
	return u
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}

// checkUnion: each union field of U has exactly one kind, named after
// it, that is set when (and only when) that field is; kinds come in the
// order of the fields.
func checkUnion[U any, K kind[U]](t *testing.T, u *union[U, K], common ...string) {
	t.Helper()
	fields := unionFields[U](common...)
	var want []string
	for _, f := range fields {
		name := jsonName(f)
		want = append(want, name)
		var got []string
		for _, k := range u.setOn(withField[U](t, f)) {
			got = append(got, k.fieldName())
		}
		if !slices.Equal(got, []string{name}) {
			t.Errorf("%T with only %s set: kinds %v set, want [%s] (declare one kind per field, in a file of its own)", *new(U), name, got, name)
		}
	}
	if got := u.names(); !slices.Equal(got, want) {
		t.Errorf("%T kinds %v, want one per field in field order: %v", *new(U), got, want)
	}
}

func TestEveryStepFieldIsOneKind(t *testing.T) {
	checkUnion(t, &stepKinds, "name", "cluster", "continueOnError", "timeout")
}

func TestEveryAssertionFieldIsOneKind(t *testing.T) {
	checkUnion(t, &checkKinds, "name")
}

func TestKindsAreComplete(t *testing.T) {
	for _, k := range stepKinds.kinds {
		if (k.do == nil) != (k.scope == onItsSteps) {
			t.Errorf("step %s: a do, unless it runs steps of its own", k.name)
		}
	}
	for _, k := range checkKinds.kinds {
		if k.describe == nil || k.evaluate == nil {
			t.Errorf("check %s: want describe and evaluate", k.name)
		}
	}
}

func TestUnionSaysWhatIsMissingOrTooMuch(t *testing.T) {
	if _, err := stepKinds.one(&v1alpha1.Step{}); err == nil || !strings.HasPrefix(err.Error(), "no action; give one of apply, delete, scale,") {
		t.Errorf("no action: %v", err)
	}
	_, err := checkKinds.one(&v1alpha1.Assertion{CEL: "true", Pods: &v1alpha1.PodsAssertion{}})
	if want := "has pods and cel; one check per assertion (make it a list item each)"; err == nil || err.Error() != want {
		t.Errorf("two checks: %v, want %s", err, want)
	}
}

func TestRegisteringAKindWithoutAFieldPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	u := union[v1alpha1.Step, *stepKind]{noun: "action"}
	u.register(&stepKind{name: "teleport"})
}
