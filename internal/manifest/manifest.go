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
	"regexp"
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
// (networking.podSubnett), and so is a value of the wrong type. An error
// that has a line is an *Error holding it (InFile says it with the file).
func Decode(data []byte, obj Object, apiVersion, kind string) error {
	_, err := DecodeFile(data, obj, apiVersion, kind)
	return err
}

// toJSON is sigs.k8s.io/yaml's conversion, as kubectl's: YAML 1.1, keys
// given twice refused.
func toJSON(data []byte) ([]byte, error) { return yaml.YAMLToJSONStrict(data) }

// DecodeJSON reads one JSON value into obj strictly, with Decode's
// one-line errors naming the field by its path: for callers that hold a
// part of a file already (a scenario's step). An error about one field is
// an *Error with its Path (and no line, which JSON does not have).
func DecodeJSON(jsonData []byte, obj any) error {
	strictErrs, err := kjson.UnmarshalStrict(jsonData, obj, kjson.DisallowUnknownFields, kjson.DisallowDuplicateFields)
	if err != nil {
		return explain(jsonData, obj, err)
	}
	if len(strictErrs) > 0 {
		msg := strictErrs[0].Error()
		e := &Error{Msg: msg}
		if m := quotedField.FindStringSubmatch(msg); m != nil {
			e.Path = m[1]
		}
		return e
	}
	return nil
}

// quotedField is the path in sigs.k8s.io/json's strict errors: unknown
// field "networking.podSubnett".
var quotedField = regexp.MustCompile(`field "([^"]+)"`)

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
		return &Error{Path: "kind", Msg: fmt.Sprintf("not a %s (kind: %s)", kind, got.Kind)}
	case got.APIVersion != apiVersion:
		return &Error{Path: "apiVersion", Msg: fmt.Sprintf("apiVersion: got %q, want %s", got.APIVersion, apiVersion)}
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
