package scenario

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

// enumField is a field of a scenario's schema: its struct and JSON name.
type enumField struct {
	in   reflect.Type
	name string
}

// enums are the fields that take one of a few values, with those values.
// Each is checked as the file is read, at the field's line: a misspelt
// one (phase: Runing) would otherwise match nothing and be waited out.
var enums = map[enumField][]string{
	{reflect.TypeFor[v1alpha1.PodsAssertion](), "phase"}: {string(corev1.PodPending), string(corev1.PodRunning),
		string(corev1.PodSucceeded), string(corev1.PodFailed), string(corev1.PodUnknown)},
	{reflect.TypeFor[v1alpha1.DrainStep](), "expect"}: {"completes", "blocked"},
	{reflect.TypeFor[v1alpha1.EvictStep](), "expect"}: {"allowed", "refused"},
	{reflect.TypeFor[v1alpha1.ScaleStep](), "kind"}:   sortedKeys(workloads),
	// rolledOut reads Deployments' rollout status, and only theirs.
	{reflect.TypeFor[v1alpha1.WorkloadRef](), "kind"}: {"Deployment"},
	{reflect.TypeFor[corev1.Taint](), "effect"}: {string(corev1.TaintEffectNoSchedule),
		string(corev1.TaintEffectPreferNoSchedule), string(corev1.TaintEffectNoExecute)},
	{reflect.TypeFor[resourcev1.DeviceTaint](), "effect"}: {string(resourcev1.DeviceTaintEffectNoSchedule),
		string(resourcev1.DeviceTaintEffectNoExecute), string(resourcev1.DeviceTaintEffectNone)},
	{reflect.TypeFor[v1alpha1.ClusterSpec](), "stages"}:       v1alpha1.StageSets,
	{reflect.TypeFor[v1alpha1.WorkloadsAssertion](), "state"}: v1alpha1.WorkloadStates,
}

var unmarshaler = reflect.TypeFor[json.Unmarshaler]()

// checkEnums checks every enum-valued field under n, a node of type t at
// path, against enums; "" (the field's default) passes.
func checkEnums(n *yaml.Node, t reflect.Type, path string) error {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n == nil || reflect.PointerTo(t).Implements(unmarshaler) {
		return nil // a type that reads itself (a node list, a duration)
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, value := n.Content[i].Value, n.Content[i+1]
			in, f, ok := schemaField(t, key)
			if !ok {
				continue // decoding has refused it already
			}
			at := joinField(path, key)
			if allowed := enums[enumField{in, key}]; allowed != nil && value.Kind == yaml.ScalarNode &&
				value.Value != "" && !slices.Contains(allowed, value.Value) {
				return lineError(value, "%s: %q is not one of %s", at, value.Value, strings.Join(allowed, ", "))
			}
			if err := checkEnums(value, f.Type, at); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			return nil
		}
		for i, item := range n.Content {
			if err := checkEnums(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := checkEnums(n.Content[i+1], t.Elem(), joinField(path, n.Content[i].Value)); err != nil {
				return err
			}
		}
	}
	return nil
}

// schemaField is the field a key of a mapping of type t decodes into,
// and the struct that declares it (one embedded inline, for PodSet's
// selector in PodsAssertion).
func schemaField(t reflect.Type, key string) (in reflect.Type, f reflect.StructField, ok bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" {
			embedded := f.Type
			if embedded.Kind() == reflect.Pointer {
				embedded = embedded.Elem()
			}
			if in, inner, ok := schemaField(embedded, key); ok {
				return in, inner, true
			}
			continue
		}
		if name == key {
			return t, f, true
		}
	}
	return nil, reflect.StructField{}, false
}

func joinField(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
