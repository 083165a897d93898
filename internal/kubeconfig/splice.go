package kubeconfig

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Doc is a kubeconfig's text. It is changed by replacing only the lines of
// the entries being changed, so comments, order, spacing and fields no
// library knows stay exactly as they were everywhere else. Where the file
// is laid out otherwise than block YAML (JSON, flow style), or a splice
// would not read back as intended, the file is re-encoded from its parsed
// YAML instead: then its content is kept, though not its layout.
type Doc struct {
	data    []byte
	changed bool
}

// skeleton starts a kubeconfig that has no content yet.
const skeleton = "apiVersion: v1\nkind: Config\n"

// lists are a kubeconfig's lists of named entries.
var lists = []string{"clusters", "users", "contexts"}

// newDoc checks that data is a kubeconfig kubesim can edit.
func newDoc(data []byte) (*Doc, error) {
	d := &Doc{data: data}
	if _, err := d.parse(); err != nil {
		return nil, err
	}
	return d, nil
}

// Merge copies the cluster, user and context called name from the
// kubeconfig from (YAML, as clientcmd.Write makes it) into d, replacing
// entries of that name, and makes that context current.
func (d *Doc) Merge(from []byte, name string) error {
	if err := d.setEntries(from, name); err != nil {
		return err
	}
	return d.edit(func(t *tree) (splice, error) { return t.setCurrentContext(name) })
}

// Update is Merge for a context d already has: it replaces the cluster,
// user and context called name and leaves the current context as it is.
// Where d has no context called name (it was never merged, or its owner
// took it out), it changes nothing and reports false.
func (d *Doc) Update(from []byte, name string) (bool, error) {
	t, err := d.parse()
	if err != nil {
		return false, err
	}
	if _, contexts := lookup(t.root, "contexts"); indexOf(contexts, name) < 0 {
		return false, nil
	}
	return true, d.setEntries(from, name)
}

// setEntries replaces d's cluster, user and context called name with
// those of the kubeconfig from, adding any d lacks.
func (d *Doc) setEntries(from []byte, name string) error {
	var src yaml.Node
	if err := yaml.Unmarshal(from, &src); err != nil {
		return fmt.Errorf("merging %s: %w", name, err)
	}
	if src.Kind != yaml.DocumentNode || src.Content[0].Kind != yaml.MappingNode {
		return fmt.Errorf("merging %s: not a kubeconfig", name)
	}
	for _, list := range lists {
		_, entries := lookup(src.Content[0], list)
		i := indexOf(entries, name)
		if i < 0 {
			return fmt.Errorf("merging %s: it has no entry in %s", name, list)
		}
		if err := d.edit(func(t *tree) (splice, error) { return t.setEntry(list, entries.Content[i]) }); err != nil {
			return err
		}
	}
	return nil
}

// Remove removes the cluster, user and context called name, and the
// current context if it is that one. It reports whether there was such a
// context.
func (d *Doc) Remove(name string) (bool, error) {
	had := false
	for _, list := range lists {
		err := d.edit(func(t *tree) (splice, error) {
			s := t.removeEntry(list, name)
			had = had || (list == "contexts" && s.changed)
			return s, nil
		})
		if err != nil {
			return false, err
		}
	}
	err := d.edit(func(t *tree) (splice, error) {
		if _, current := lookup(t.root, "current-context"); current == nil || current.Value != name {
			return splice{}, nil
		}
		return t.setCurrentContext("")
	})
	return had, err
}

// tree is a kubeconfig parsed: its lines and its YAML.
type tree struct {
	lines []string // each with its line break
	doc   *yaml.Node
	root  *yaml.Node // the top-level mapping
}

// splice is one edit of the text: lines [from, to) become text. inPlace
// is false where the layout is not block YAML lines can be spliced into;
// changed is false where there is nothing to do.
type splice struct {
	from, to int
	text     string
	inPlace  bool
	changed  bool
}

// parse parses the text, ending it with a line break and starting an
// empty one (or one of only comments) with the skeleton.
func (d *Doc) parse() (*tree, error) {
	if len(d.data) > 0 && d.data[len(d.data)-1] != '\n' {
		d.data = append(bytes.Clone(d.data), '\n')
	}
	var doc yaml.Node
	err := yaml.Unmarshal(d.data, &doc)
	if err == nil && doc.Kind == 0 {
		d.data = append(bytes.Clone(d.data), skeleton...)
		err = yaml.Unmarshal(d.data, &doc)
	}
	if err != nil {
		return nil, fmt.Errorf("not valid YAML: %s", strings.Join(strings.Fields(err.Error()), " "))
	}
	if doc.Kind == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("not a kubeconfig: its top level is not a mapping (line %d)", doc.Line)
	}
	return &tree{lines: strings.SplitAfter(string(d.data), "\n"), doc: &doc, root: doc.Content[0]}, nil
}

// edit applies one change: change edits the parsed YAML and says which
// lines that replaces. The spliced text is kept if it reads back as the
// edited YAML; otherwise the edited YAML is encoded whole.
func (d *Doc) edit(change func(*tree) (splice, error)) error {
	t, err := d.parse()
	if err != nil {
		return err
	}
	s, err := change(t)
	if err != nil || !s.changed {
		return err
	}
	d.changed = true
	if s.inPlace {
		spliced := strings.Join(t.lines[:s.from], "") + s.text + strings.Join(t.lines[s.to:], "")
		var check yaml.Node
		if yaml.Unmarshal([]byte(spliced), &check) == nil && sameContent(&check, t.doc) {
			d.data = []byte(spliced)
			return nil
		}
	}
	d.data, err = encode(t.doc, 0)
	return err
}

// setEntry adds entry (a mapping with a name) to a list, replacing the
// entry of the same name.
func (t *tree) setEntry(list string, entry *yaml.Node) (splice, error) {
	name := nameOf(entry)
	k, entries := lookup(t.root, list)
	switch {
	case k == nil:
		return t.appendKey(list, sequence(entry))
	case entries.Kind == yaml.SequenceNode && len(entries.Content) > 0:
		i := indexOf(entries, name)
		at := i
		if i < 0 {
			at = len(entries.Content) - 1 // insert after the last entry
		}
		from, to, dash, ok := t.entrySpan(k, entries, at)
		if i < 0 {
			entries.Content = append(entries.Content, entry)
			from = to
		} else {
			entries.Content[i] = entry
		}
		text, err := encode(sequence(entry), dash)
		return splice{from: from, to: to, text: string(text), inPlace: ok, changed: true}, err
	case entries.Kind == yaml.SequenceNode || isNull(entries): // [] or null
		*entries = *sequence(entry)
		return t.replaceKey(k, entries)
	default:
		return splice{}, fmt.Errorf("%s (line %d) is not a list", list, k.Line)
	}
}

// removeEntry removes the entry called name from a list.
func (t *tree) removeEntry(list, name string) splice {
	k, entries := lookup(t.root, list)
	i := indexOf(entries, name)
	if i < 0 {
		return splice{}
	}
	from, to, _, ok := t.entrySpan(k, entries, i)
	entries.Content = append(entries.Content[:i], entries.Content[i+1:]...)
	if len(entries.Content) == 0 {
		*entries = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"} // as "clusters:" with nothing under it reads
	}
	return splice{from: from, to: to, inPlace: ok, changed: true}
}

// setCurrentContext sets current-context.
func (t *tree) setCurrentContext(name string) (splice, error) {
	k, v := lookup(t.root, "current-context")
	if k == nil {
		return t.appendKey("current-context", scalar(name))
	}
	if v.Kind == yaml.ScalarNode && v.Value == name {
		return splice{}, nil
	}
	*v = *scalar(name)
	return t.replaceKey(k, v)
}

// replaceKey rewrites the lines of top-level key k, now with value v.
func (t *tree) replaceKey(k, v *yaml.Node) (splice, error) {
	from, to := t.keySpan(k)
	text, err := encode(pair(k.Value, v), k.Column-1)
	return splice{from: from, to: to, text: string(text), inPlace: t.root.Style&yaml.FlowStyle == 0, changed: true}, err
}

// appendKey adds key: v after the last top-level key.
func (t *tree) appendKey(key string, v *yaml.Node) (splice, error) {
	keys := t.root.Content
	if len(keys) == 0 { // {}
		t.root.Content = append(keys, scalar(key), v)
		return splice{changed: true}, nil
	}
	last := keys[len(keys)-2]
	_, end := t.keySpan(last) // before the new key follows it
	t.root.Content = append(keys, scalar(key), v)
	text, err := encode(pair(key, v), last.Column-1)
	return splice{from: end, to: end, text: string(text), inPlace: t.root.Style&yaml.FlowStyle == 0, changed: true}, err
}

// keySpan is the lines of a top-level key and its value, less the blank
// and comment lines at its end: those belong to what follows.
func (t *tree) keySpan(k *yaml.Node) (from, to int) {
	from, to = k.Line-1, len(t.lines)
	for i := 0; i+2 < len(t.root.Content); i += 2 {
		if t.root.Content[i] == k {
			to = t.root.Content[i+2].Line - 1
		}
	}
	return from, t.trim(from, to)
}

// entrySpan is the lines of the i-th entry of list k's block sequence,
// less trailing blank and comment lines, and the column of its dash. ok is
// false if the entry does not start with its dash on its first line.
func (t *tree) entrySpan(k, entries *yaml.Node, i int) (from, to, dash int, ok bool) {
	from, dash, ok = t.dashLine(entries.Content[i])
	if i+1 < len(entries.Content) {
		next, _, nextOK := t.dashLine(entries.Content[i+1])
		return from, t.trim(from, next), dash, ok && nextOK
	}
	_, to = t.keySpan(k)
	return from, to, dash, ok && entries.Style&yaml.FlowStyle == 0
}

// dashLine finds the line of an entry's "- " and the column of the dash.
func (t *tree) dashLine(entry *yaml.Node) (line, dash int, ok bool) {
	line = entry.Line - 1
	if line >= len(t.lines) || entry.Column-1 > len(t.lines[line]) {
		return line, 0, false
	}
	before := t.lines[line][:entry.Column-1]
	return line, strings.Index(before, "-"), strings.TrimSpace(before) == "-"
}

// trim moves to back over blank and comment lines, keeping from's line.
func (t *tree) trim(from, to int) int {
	for to > from+1 {
		line := strings.TrimSpace(t.lines[to-1])
		if line != "" && !strings.HasPrefix(line, "#") {
			break
		}
		to--
	}
	return to
}

// lookup returns a mapping's key node and value node for key, or nils.
func lookup(m *yaml.Node, key string) (k, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

// indexOf is the index of the entry called name in a list, or -1.
func indexOf(entries *yaml.Node, name string) int {
	if entries == nil || entries.Kind != yaml.SequenceNode {
		return -1
	}
	for i, e := range entries.Content {
		if nameOf(e) == name {
			return i
		}
	}
	return -1
}

func nameOf(entry *yaml.Node) string {
	if entry.Kind != yaml.MappingNode {
		return ""
	}
	_, v := lookup(entry, "name")
	if v == nil {
		return ""
	}
	return v.Value
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && (n.Tag == "!!null" || n.Value == "")
}

func scalar(value string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value}
}

func sequence(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Content: items}
}

func pair(key string, v *yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{scalar(key), v}}
}

// encode writes n as block YAML as kubectl lays it out (two spaces, list
// dashes under their key), each line indented by indent spaces.
func encode(n *yaml.Node, indent int) ([]byte, error) {
	var b bytes.Buffer
	e := yaml.NewEncoder(&b)
	e.SetIndent(2)
	e.CompactSeqIndent()
	if err := e.Encode(n); err != nil {
		return nil, err
	}
	if err := e.Close(); err != nil {
		return nil, err
	}
	if indent <= 0 {
		return b.Bytes(), nil
	}
	pad := strings.Repeat(" ", indent)
	lines := strings.SplitAfter(b.String(), "\n")
	for i, line := range lines {
		if line != "" {
			lines[i] = pad + line
		}
	}
	return []byte(strings.Join(lines, "")), nil
}

// sameContent reports whether two YAML documents hold the same data.
func sameContent(a, b *yaml.Node) bool {
	var x, y any
	return a.Decode(&x) == nil && b.Decode(&y) == nil && reflect.DeepEqual(x, y)
}
