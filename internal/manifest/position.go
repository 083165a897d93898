package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Error is a fault in a YAML file: what is wrong, naming the field by
// its path (nodeGroups[1].count), and the line it is at. Its Error() is
// the message alone, as before lines were known; InFile puts the file and
// the line in front: every file kubesim reads reports position that way.
type Error struct {
	// Line is the line in the file, counting from 1; 0 if not known.
	Line int
	// Path is the field at fault ("" for the file as a whole), which Msg
	// names already; it is what the line was found by.
	Path string
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// InFile says err of the file named file as "FILE:LINE: MESSAGE", or
// "FILE: MESSAGE" when the line is not known. Only an *Error of this file
// itself gives a line: one wrapped inside err is of another file (a node
// template a scenario names), which its own message names.
func InFile(file string, err error) error {
	if e, ok := err.(*Error); ok && e.Line > 0 {
		return fmt.Errorf("%s:%d: %w", file, e.Line, err)
	}
	return fmt.Errorf("%s: %w", file, err)
}

// Errorf is an *Error at the line of node n (0 if n is nil).
func Errorf(n *yaml.Node, format string, args ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &Error{Line: line, Msg: fmt.Sprintf(format, args...)}
}

var yamlLine = regexp.MustCompile(`^line (\d+): (.*)$`)

// parserProblems are the problems libyaml's parser (as against its
// scanner) reports. go.yaml.in/yaml/v3 prints the line of a parser error
// counting from 0, and of a scanner error counting from 1
// (parser.fail in its decode.go): the messages are all that tell them
// apart.
var parserProblems = map[string]bool{
	"did not find expected <stream-start>":   true,
	"did not find expected <document start>": true,
	"found undefined tag handle":             true,
	"did not find expected node content":     true,
	"did not find expected '-' indicator":    true,
	"did not find expected key":              true,
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found duplicate %TAG directive":         true,
}

// ParseYAML parses one YAML document into its nodes, which keep the line
// of every field. Text that is not YAML is an *Error at the line the
// parser stopped at (an unclosed bracket's, a string's that does not end).
func ParseYAML(data []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, syntaxError(err)
	}
	return &doc, nil
}

func syntaxError(err error) *Error {
	msg := strings.Join(strings.Fields(strings.TrimPrefix(err.Error(), "yaml: ")), " ")
	line := 0
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
		if parserProblems[msg] {
			line++
		}
	}
	return &Error{Line: line, Msg: "not valid YAML: " + msg}
}

// DecodeNode decodes the YAML under n into obj strictly, as DecodeJSON
// does; an error is an *Error at the line of the field at fault, its path
// after prefix (steps[2]) when there is one.
func DecodeNode(n *yaml.Node, obj any, prefix string) error {
	var v any
	if err := n.Decode(&v); err != nil {
		return Errorf(n, "%s", strings.Join(strings.Fields(strings.TrimPrefix(err.Error(), "yaml: ")), " "))
	}
	data, err := json.Marshal(stringKeys(v))
	if err != nil {
		return Errorf(n, "cannot be read as JSON: %v", err)
	}
	err = DecodeJSON(data, obj)
	e, ok := err.(*Error)
	if !ok {
		return err
	}
	at := Find(n, e.Path)
	if prefix != "" && e.Path != "" {
		e.Msg = strings.Replace(e.Msg, e.Path, prefix+"."+e.Path, 1)
		e.Path = prefix + "." + e.Path
	}
	e.Line = at.Line
	return e
}

// stringKeys makes the keys of mappings yaml.v3 decodes as map[any]any
// (some key is not a string: 1: a) strings, as JSON has them.
func stringKeys(v any) any {
	switch v := v.(type) {
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[fmt.Sprint(k)] = stringKeys(x)
		}
		return m
	case map[string]any:
		for k, x := range v {
			v[k] = stringKeys(x)
		}
	case []any:
		for i, x := range v {
			v[i] = stringKeys(x)
		}
	}
	return v
}

// Find follows a field path (steps[2].drain.expect, or steps.2.drain) from
// n as far as the file has it and returns the node it reached: a scalar
// field's key, whose line is the field's. A mapping key may hold dots
// (labels.topology.kubernetes.io/zone): the longest key that matches wins.
func Find(n *yaml.Node, path string) *yaml.Node {
	value, key, _ := walk(n, path)
	if key != nil && value.Kind == yaml.ScalarNode {
		return key
	}
	return value
}

// Lookup is the value at path under n, if the file gives it.
func Lookup(n *yaml.Node, path string) (*yaml.Node, bool) {
	value, _, whole := walk(n, path)
	return value, whole
}

// walk follows path from n as far as it goes: the node reached, the key
// it is the value of (nil for a list item), and whether that is the end.
func walk(n *yaml.Node, path string) (value, key *yaml.Node, whole bool) {
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	toks := pathTokens(path)
	i := 0
	for i < len(toks) && n != nil {
		var next, nextKey *yaml.Node
		used := 1
		switch n.Kind {
		case yaml.MappingNode:
		keys:
			for j := len(toks); j > i; j-- {
				name := strings.Join(toks[i:j], ".")
				for k := 0; k+1 < len(n.Content); k += 2 {
					if n.Content[k].Value == name {
						next, nextKey, used = n.Content[k+1], n.Content[k], j-i
						break keys
					}
				}
			}
		case yaml.SequenceNode:
			if k, err := strconv.Atoi(toks[i]); err == nil && k >= 0 && k < len(n.Content) {
				next = n.Content[k]
			}
		case yaml.AliasNode:
			next, nextKey, used = n.Alias, key, 0
		}
		if next == nil {
			return n, key, false
		}
		n, key, i = next, nextKey, i+used
	}
	return n, key, i == len(toks)
}

// pathTokens splits a field path at its dots and brackets.
func pathTokens(path string) []string {
	return strings.FieldsFunc(path, func(r rune) bool { return r == '.' || r == '[' || r == ']' })
}

// strictYAMLError is an error of what sigs.k8s.io/yaml alone refuses (a key
// given twice), whose message has the line counted from 1.
func strictYAMLError(err error) *Error {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	for _, prefix := range []string{"error converting YAML to JSON: ", "yaml: ", "unmarshal errors: "} {
		msg = strings.TrimPrefix(msg, prefix)
	}
	line := 0
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	return &Error{Line: line, Msg: "not valid YAML: " + msg}
}

// at gives an *Error with a path but no line the line of its field in
// the document root.
func at(root *yaml.Node, err error) error {
	if e, ok := err.(*Error); ok && e.Line == 0 && e.Path != "" && root != nil {
		e.Line = Find(root, e.Path).Line
	}
	return err
}

// DecodeFile is Decode, and returns the document's YAML too, each node at
// its line in data, for a caller's own checks to name lines (Find).
func DecodeFile(data []byte, obj Object, apiVersion, kind string) (*yaml.Node, error) {
	docs, err := Documents(data)
	if err != nil {
		return nil, err
	}
	if len(docs) > 1 {
		return nil, fmt.Errorf("holds %d documents (separated by ---); want one %s", len(docs), kind)
	}
	offset := 0 // lines before the document: comments, a ---
	if len(docs) == 1 {
		if at := bytes.Index(data, docs[0]); at > 0 {
			offset = bytes.Count(data[:at], []byte("\n"))
		}
		data = docs[0]
	}
	root, err := decodeDocument(data, obj, apiVersion, kind)
	if e, ok := err.(*Error); ok && e.Line > 0 {
		e.Line += offset
	}
	shiftLines(root, offset)
	return root, err
}

// decodeDocument is DecodeFile of one document; lines count from its
// start. The lines are those of the text parsed by ParseYAML, as a
// scenario's are; the conversion to JSON is toJSON's.
func decodeDocument(data []byte, obj Object, apiVersion, kind string) (*yaml.Node, error) {
	root, perr := ParseYAML(data)
	jsonData, err := toJSON(data)
	switch {
	case err != nil && perr != nil:
		return nil, perr
	case err != nil:
		return root, strictYAMLError(err)
	}
	if err := checkKind(jsonData, apiVersion, kind); err != nil {
		return root, at(root, err)
	}
	return root, at(root, DecodeJSON(jsonData, obj))
}

func shiftLines(n *yaml.Node, by int) {
	if n == nil || by == 0 {
		return
	}
	n.Line += by
	for _, c := range n.Content {
		shiftLines(c, by)
	}
}
