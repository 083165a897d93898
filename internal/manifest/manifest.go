// Package manifest reads the YAML manifests users give kubesim (cluster
// configs, node templates, Stages) strictly, with one-line errors that
// name the field at fault in the user's words.
package manifest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Object is anything with apiVersion and kind (it embeds metav1.TypeMeta).
type Object interface {
	GetObjectKind() schema.ObjectKind
}

// Decode reads data, one manifest of the given apiVersion and kind, into
// obj: unknown or duplicate fields are errors naming the field by its path
// (networking.podSubnett), and so is a value of the wrong type.
func Decode(data []byte, obj Object, apiVersion, kind string) error {
	docs, err := Documents(data)
	if err != nil {
		return err
	}
	if len(docs) > 1 {
		return fmt.Errorf("holds %d documents (separated by ---); want one %s", len(docs), kind)
	}
	if len(docs) == 1 {
		data = docs[0]
	}
	jsonData, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		// One line: the YAML library splits its message over several.
		return fmt.Errorf("not valid YAML: %s", strings.Join(strings.Fields(err.Error()), " "))
	}
	if err := checkKind(jsonData, apiVersion, kind); err != nil {
		return err
	}
	return DecodeJSON(jsonData, obj)
}

// DecodeJSON reads one JSON value into obj strictly, with Decode's
// one-line errors naming the field by its path: for callers that hold a
// part of a file already (a scenario's step).
func DecodeJSON(jsonData []byte, obj any) error {
	strictErrs, err := kjson.UnmarshalStrict(jsonData, obj, kjson.DisallowUnknownFields, kjson.DisallowDuplicateFields)
	if err != nil {
		return explain(jsonData, obj, err)
	}
	if len(strictErrs) > 0 {
		return strictErrs[0]
	}
	return nil
}

// checkKind checks a manifest's apiVersion and kind before anything else,
// so a manifest of another kind is called that rather than a list of the
// fields it has that the wanted kind has not.
func checkKind(jsonData []byte, apiVersion, kind string) error {
	if !bytes.HasPrefix(jsonData, []byte("{")) {
		return fmt.Errorf("not a %s: want a mapping with apiVersion: %s and kind: %s", kind, apiVersion, kind)
	}
	var got struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(jsonData, &got); err != nil {
		return explain(jsonData, &got, err)
	}
	switch {
	case got.Kind == "":
		return fmt.Errorf("not a %s (no kind); want apiVersion: %s and kind: %s", kind, apiVersion, kind)
	case got.Kind != kind:
		return fmt.Errorf("not a %s (kind: %s)", kind, got.Kind)
	case got.APIVersion != apiVersion:
		return fmt.Errorf("apiVersion: got %q, want %s", got.APIVersion, apiVersion)
	}
	return nil
}

// Documents splits a YAML stream at its --- lines, leaving out documents
// that hold nothing but comments.
func Documents(data []byte) ([][]byte, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		if hasContent(doc) {
			docs = append(docs, doc)
		}
	}
}

func hasContent(doc []byte) bool {
	for _, line := range strings.Split(string(doc), "\n") {
		if line = strings.TrimSpace(line); line != "" && line != "---" && !strings.HasPrefix(line, "#") {
			return true
		}
	}
	return false
}
