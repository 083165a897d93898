package scenario

import (
	"fmt"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

// A foreach is expanded when the file is read (expandForeach): its Steps
// are its steps once per value, which it hands the runner as one group
// per value (children). It acts on no cluster itself; its cluster, name
// and timeout are its steps' defaults.
func init() {
	stepKinds.register(&stepKind{
		name:  "foreach",
		scope: onItsSteps,
		setDefaults: func(s *v1alpha1.Step, dir string) {
			for i := range s.Foreach.Steps {
				inner := &s.Foreach.Steps[i]
				if inner.Cluster == "" && !onNamedClustersOnly(inner) {
					inner.Cluster = s.Cluster
				}
				if inner.Name == "" {
					inner.Name = s.Name
				}
				if inner.Timeout == nil {
					inner.Timeout = s.Timeout
				}
			}
			setStepDefaults(s.Foreach.Steps, dir)
		},
		validate: func(s *v1alpha1.Step, _ clusterNames) error {
			if len(s.Foreach.Values) == 0 {
				return fmt.Errorf("values: required")
			}
			return nil
		},
		children: iterations,
	})
}

// defaultForeachVar is the variable of a foreach that names none.
const defaultForeachVar = "item"

// iterations are a foreach's expanded steps, one group per value, each
// named after its value as reports show it: "scale [zone=a]".
func iterations(s *v1alpha1.Step) []stepGroup {
	f := s.Foreach
	if len(f.Values) == 0 {
		return nil // refused by validate
	}
	v := f.Var
	if v == "" {
		v = defaultForeachVar
	}
	per := len(f.Steps) / len(f.Values)
	groups := make([]stepGroup, len(f.Values))
	for j, value := range f.Values {
		groups[j] = stepGroup{suffix: fmt.Sprintf(" [%s=%s]", v, value), steps: f.Steps[j*per : (j+1)*per]}
	}
	return groups
}

// expandForeach replaces, in a list of steps, each foreach's steps by one
// copy per value with ${var} substituted, innermost last. It works on
// the YAML, before decoding, so that ${var} may stand in any field.
func expandForeach(steps *yaml.Node) error {
	for _, step := range steps.Content {
		fe := child(step, "foreach")
		if fe == nil {
			continue
		}
		if fe.Kind != yaml.MappingNode {
			return lineError(fe, "foreach: want {var: NAME, values: [...], steps: [...]}")
		}
		name := defaultForeachVar
		if v := child(fe, "var"); v != nil {
			name = v.Value
		}
		values, body := child(fe, "values"), child(fe, "steps")
		if values != nil && values.Kind == yaml.MappingNode {
			if err := expandRange(values); err != nil {
				return err
			}
		}
		if values == nil || values.Kind != yaml.SequenceNode || len(values.Content) == 0 {
			return lineError(orNode(values, fe), "foreach.values: required, a list such as [3, 4, 5] or a range {from: 1, to: 200}")
		}
		if body == nil || body.Kind != yaml.SequenceNode || len(body.Content) == 0 {
			return lineError(orNode(body, fe), "foreach.steps: required, the steps to repeat")
		}
		expanded := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: body.Line, Column: body.Column}
		for _, v := range values.Content {
			if v.Kind != yaml.ScalarNode {
				return lineError(v, "foreach.values: each value must be a scalar, such as 3 or zone-a")
			}
			v.Tag = "!!str"
			c := clone(body)
			substitute(c, map[string]string{name: v.Value})
			if err := expandForeach(c); err != nil {
				return err
			}
			expanded.Content = append(expanded.Content, c.Content...)
		}
		for i := 0; i+1 < len(fe.Content); i += 2 {
			if fe.Content[i].Value == "steps" {
				fe.Content[i+1] = expanded
			}
		}
	}
	return nil
}

// maxRange bounds a range of values: each is a copy of the steps.
const maxRange = 10000

// expandRange turns values: {from: A, to: B} into the list A, A+1, …, B.
func expandRange(values *yaml.Node) error {
	bound := func(key string) (int, error) {
		n := child(values, key)
		if n == nil {
			return 0, lineError(values, "foreach.values: a range wants from and to, such as {from: 1, to: 200}")
		}
		v, err := strconv.Atoi(n.Value)
		if err != nil {
			return 0, lineError(n, "foreach.values.%s: %q is not a whole number", key, n.Value)
		}
		return v, nil
	}
	from, err := bound("from")
	if err != nil {
		return err
	}
	to, err := bound("to")
	if err != nil {
		return err
	}
	if to < from || to-from >= maxRange {
		return lineError(values, "foreach.values: from %d to %d; give to ≥ from, at most %d values", from, to, maxRange)
	}
	seq := make([]*yaml.Node, 0, to-from+1)
	for i := from; i <= to; i++ {
		seq = append(seq, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: strconv.Itoa(i), Line: values.Line, Column: values.Column})
	}
	values.Kind, values.Tag, values.Content, values.Style = yaml.SequenceNode, "!!seq", seq, yaml.FlowStyle
	return nil
}

func clone(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, k := range n.Content {
		c.Content[i] = clone(k)
	}
	return &c
}
