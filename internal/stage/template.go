package stage

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"text/template"
	"time"

	"sigs.k8s.io/yaml"
)

// ContextFuncNames are the template helpers whose answers depend on the
// object being rendered or on the simulator (addresses, the clock of its
// start); the simulator supplies them per render. Templates may use any of
// them; one not supplied for a kind fails the render with a clear error.
var ContextFuncNames = []string{
	"NodeIP", "NodeName", "NodePort", "NodeConditions", "NodeIPWith", "NodeIPsWith",
	"PodIP", "PodIPWith", "PodIPsWith", "StartTime", "Version", "KubeletVersion",
}

// unavailableFuncs stand for the context helpers until a render supplies
// its own.
var unavailableFuncs = func() template.FuncMap {
	funcs := template.FuncMap{}
	for _, name := range ContextFuncNames {
		funcs[name] = notAvailable(name)
	}
	return funcs
}()

// renderer is a parsed template with a pool of its clones. Each render
// binds its object's context helpers to a clone nobody else is using;
// cloning a template that carries sprig's two hundred helpers on every
// render cost the simulator over a tenth of its CPU, so clones are reused.
// Each clone has its own fence, its helpers bound to it.
type renderer struct {
	parsed *template.Template
	clones sync.Pool // of *clone
}

type clone struct {
	t     *template.Template
	fence *fence
}

func parseTemplate(name, text string) (*renderer, error) {
	t, err := template.New(name).Funcs(staticFuncs).Funcs(unavailableFuncs).Parse(text)
	if err != nil {
		return nil, err
	}
	instrument(t)
	return &renderer{parsed: t}, nil
}

func notAvailable(name string) func(...any) (any, error) {
	return func(...any) (any, error) {
		return nil, fmt.Errorf("%s is not available for this kind of object", name)
	}
}

// render executes the template and turns its YAML output into JSON.
func (r *renderer) render(obj map[string]any, funcs template.FuncMap) (json.RawMessage, error) {
	c, _ := r.clones.Get().(*clone)
	if c == nil {
		t, err := r.parsed.Clone()
		if err != nil {
			return nil, err
		}
		f := newFence()
		c = &clone{t: t.Funcs(f.funcs), fence: f}
	}
	c.fence.reset()
	var out cappedBuffer
	err := c.t.Funcs(funcs).Execute(&out, obj)
	// The next render must not reach this object through its helpers.
	c.t.Funcs(unavailableFuncs)
	r.clones.Put(c)
	if err != nil {
		return nil, err
	}
	data, err := yaml.YAMLToJSON(out.buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("rendered text is not YAML: %w", err)
	}
	if string(data) == "null" {
		data = []byte("{}")
	}
	return data, nil
}

// quote renders v as a quoted JSON (so YAML) string, as KWOK's Quote does:
// strings as they are, times in RFC 3339, anything else as its JSON text
// in quotes (3 → "3", true → "true": a template writing an annotation or
// a label value from a number needs a string). Nothing (nil) is "", where
// KWOK writes "null".
func quote(v any) string {
	switch v := v.(type) {
	case string:
		data, _ := json.Marshal(v)
		return string(data)
	case time.Time:
		return `"` + v.UTC().Format(time.RFC3339Nano) + `"`
	case nil:
		return `""`
	default:
		data, err := json.Marshal(v)
		if err != nil {
			return `""`
		}
		if len(data) > 0 && data[0] == '"' {
			return string(data)
		}
		quoted, _ := json.Marshal(string(data))
		return string(quoted)
	}
}

// toYAML renders v as YAML; with an indent, as KWOK does, on a line of its
// own and every line indented by indent levels of two spaces, to nest it
// under a key of the template wherever the call stands on its line.
func toYAML(v any, indent int) (string, error) {
	if err := fits(2, indent); err != nil {
		return "", err
	}
	data, err := yaml.Marshal(v)
	if err != nil {
		return "", err
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if err := fits(len(lines), 2*indent); err != nil {
		return "", err
	}
	if indent <= 0 {
		return string(data), nil
	}
	prefix := strings.Repeat("  ", indent)
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return "\n" + strings.Join(lines, "\n"), nil
}
