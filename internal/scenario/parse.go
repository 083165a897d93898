// Package scenario reads scenario files (kubesim.io/v1alpha1 Scenario):
// parse, setDefaults, validate; and runs their steps against simulated
// clusters, checking their assertions. What each kind of step and check
// does is declared once, in a file of its own (step_*.go, check_*.go).
// Package result holds what came of a run; package report writes it.
package scenario

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/manifest"
)

// File is a parsed scenario and where it came from.
type File struct {
	Path     string
	Scenario *v1alpha1.Scenario
}

var reference = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// Load reads and checks a scenario file: parameters substituted (set
// overrides the file's), foreach expanded, every field known. Errors
// name the file, the line and the field. used collects the parameter
// names the file declares.
func Load(path string, set map[string]string, used map[string]bool) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := parse(data, set, used, filepath.Dir(path))
	if err != nil {
		return nil, manifest.InFile(path, err)
	}
	if s.Name == "" {
		s.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return &File{Path: path, Scenario: s}, nil
}

// lineError is an error at the line of n, which Load says as
// "FILE:LINE: ...", as kubesim says it of every file it reads.
func lineError(n *yaml.Node, format string, args ...any) error {
	return manifest.Errorf(n, format, args...)
}

// parse reads a scenario: decoded, defaulted (paths made relative to
// dir), then validated.
func parse(data []byte, set map[string]string, used map[string]bool, dir string) (*v1alpha1.Scenario, error) {
	s, root, err := decode(data, set, used)
	if err != nil {
		return nil, err
	}
	if err := checkEnums(root, reflect.TypeFor[v1alpha1.Scenario](), ""); err != nil {
		return nil, err
	}
	setDefaults(s, dir)
	if err := validate(s, root); err != nil {
		return nil, err
	}
	return s, nil
}

// decode reads a scenario's YAML: parameters substituted, foreach
// expanded, every field known, each step's line attached. It returns the
// YAML too, for validate's messages to name lines.
func decode(data []byte, set map[string]string, used map[string]bool) (*v1alpha1.Scenario, *yaml.Node, error) {
	doc, err := manifest.ParseYAML(data)
	if err != nil {
		if e, ok := err.(*manifest.Error); ok && bytes.Contains(data, []byte("${")) {
			e.Msg += ` (inside {...}, quote a reference: "${name}")`
		}
		return nil, nil, err
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("1: not a Scenario: want a mapping with apiVersion: %s and kind: %s", v1alpha1.GroupVersion, v1alpha1.ScenarioKind)
	}
	root := doc.Content[0]
	if err := checkTypeMeta(root); err != nil {
		return nil, nil, err
	}
	params := map[string]string{}
	if p := child(root, "parameters"); p != nil {
		if p.Kind != yaml.MappingNode {
			return nil, nil, lineError(p, "parameters: want a mapping of names to values, such as replicas: 3")
		}
		for i := 0; i+1 < len(p.Content); i += 2 {
			p.Content[i+1].Tag = "!!str" // replicas: 3 is the text 3 until used
			params[p.Content[i].Value] = p.Content[i+1].Value
			used[p.Content[i].Value] = true
		}
	}
	for k, v := range set {
		if _, ok := params[k]; ok {
			params[k] = v
		}
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != "parameters" {
			substitute(root.Content[i+1], params)
		}
	}
	steps := child(root, "steps")
	if steps == nil || steps.Kind != yaml.SequenceNode || len(steps.Content) == 0 {
		return nil, nil, lineError(orNode(steps, root), "steps: required, a list of steps (apply, drain, assert, …)")
	}
	if err := expandForeach(steps); err != nil {
		return nil, nil, err
	}
	if err := leftovers(root, params); err != nil {
		return nil, nil, err
	}
	// Each step on its own first: a type error's path names no list
	// index, and this way its line is at least the step's.
	for i, n := range steps.Content {
		if err := decodeNode(n, &v1alpha1.Step{}, fmt.Sprintf("steps[%d]", i)); err != nil {
			return nil, nil, err
		}
	}
	s := &v1alpha1.Scenario{}
	if err := decodeNode(root, s, ""); err != nil {
		return nil, nil, err
	}
	attachLines(s.Steps, steps.Content)
	return s, root, nil
}

func checkTypeMeta(root *yaml.Node) error {
	kind, apiVersion := child(root, "kind"), child(root, "apiVersion")
	switch {
	case kind == nil:
		return lineError(root, "not a Scenario (no kind); want apiVersion: %s and kind: %s", v1alpha1.GroupVersion, v1alpha1.ScenarioKind)
	case kind.Value != v1alpha1.ScenarioKind:
		return lineError(kind, "kind: got %s, want %s", kind.Value, v1alpha1.ScenarioKind)
	case apiVersion == nil || apiVersion.Value != v1alpha1.GroupVersion:
		return lineError(orNode(apiVersion, root), "apiVersion: want %s", v1alpha1.GroupVersion)
	}
	return nil
}

func orNode(n, fallback *yaml.Node) *yaml.Node {
	if n != nil {
		return n
	}
	return fallback
}

// child returns the value of key in a mapping node, or nil.
func child(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// substitute replaces ${name} in every scalar under n by vars[name]. A
// scalar that is one reference and nothing else, quoted or not, takes the
// type of its value (replicas: "${n}" is a number), so references can be
// quoted inside {flow: mappings}.
func substitute(n *yaml.Node, vars map[string]string) {
	if n.Kind == yaml.ScalarNode {
		if m := reference.FindStringSubmatch(n.Value); m != nil && m[0] == n.Value {
			if v, ok := vars[m[1]]; ok {
				n.Value, n.Tag, n.Style = v, "", 0
				return
			}
		}
		out := reference.ReplaceAllStringFunc(n.Value, func(ref string) string {
			if v, ok := vars[reference.FindStringSubmatch(ref)[1]]; ok {
				return v
			}
			return ref
		})
		if out != n.Value {
			n.Value = out
			if n.Style == 0 {
				n.Tag = ""
			}
		}
	}
	for _, c := range n.Content {
		substitute(c, vars)
	}
}

// leftovers reports a ${name} nothing defined; ${index} in node labels
// is the node's number, filled in when the nodes are made.
func leftovers(n *yaml.Node, params map[string]string) error {
	if n.Kind == yaml.ScalarNode {
		for _, m := range reference.FindAllStringSubmatch(n.Value, -1) {
			if m[1] != "index" {
				names := slices.Sorted(func(yield func(string) bool) {
					for k := range params {
						if !yield(k) {
							return
						}
					}
				})
				return lineError(n, "${%s} is neither a parameter (%s) nor a foreach variable; add it under parameters:", m[1], strings.Join(names, ", "))
			}
		}
	}
	for _, c := range n.Content {
		if err := leftovers(c, params); err != nil {
			return err
		}
	}
	return nil
}

// decodeNode decodes n into out strictly; an error names the line of the
// field at fault and its path (prefixed by prefix).
func decodeNode(n *yaml.Node, out any, prefix string) error {
	return manifest.DecodeNode(n, out, prefix)
}

// find follows a path such as steps[2].drain.expect as far as it goes and
// returns the node it reached.
func find(n *yaml.Node, path string) *yaml.Node { return manifest.Find(n, path) }

// attachLines sets each step's line, and those of the steps it runs: a
// kind with children has them, expanded, under its field's steps:.
func attachLines(steps []v1alpha1.Step, nodes []*yaml.Node) {
	for i := range steps {
		s, n := &steps[i], nodes[i]
		s.Line = n.Line
		for _, k := range stepKinds.setOn(s) {
			if k.children == nil {
				continue
			}
			body := child(child(n, k.name), "steps").Content
			for _, g := range k.children(s) {
				attachLines(g.steps, body[:len(g.steps)])
				body = body[len(g.steps):]
			}
		}
	}
}
