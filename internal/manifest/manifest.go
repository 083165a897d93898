// Package manifest reads the YAML manifests users give kubesim (cluster
// configs, node templates, Stages) strictly, with one-line errors that
// name the field at fault.
package manifest

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Object is anything with apiVersion and kind (it embeds metav1.TypeMeta).
type Object interface {
	GetObjectKind() schema.ObjectKind
}

// Decode reads data into obj: unknown or duplicate fields are errors
// naming the field by its path (networking.podSubnett), and the manifest
// must be of the given apiVersion and kind.
func Decode(data []byte, obj Object, apiVersion, kind string) error {
	jsonData, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		// One line: the YAML library splits its message over several.
		return fmt.Errorf("not valid YAML: %s", strings.Join(strings.Fields(err.Error()), " "))
	}
	strictErrs, err := kjson.UnmarshalStrict(jsonData, obj, kjson.DisallowUnknownFields, kjson.DisallowDuplicateFields)
	if err != nil {
		return err
	}
	if len(strictErrs) > 0 {
		return strictErrs[0]
	}
	gotVersion, gotKind := obj.GetObjectKind().GroupVersionKind().ToAPIVersionAndKind()
	if gotVersion != apiVersion || gotKind != kind {
		return fmt.Errorf("apiVersion/kind: got %q/%q, want %s/%s", gotVersion, gotKind, apiVersion, kind)
	}
	return nil
}
