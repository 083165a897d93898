package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// A node template must be one v1 Node: a Pod, or several documents, is
// refused before anything is made.
func TestNodeTemplateMustBeOneNode(t *testing.T) {
	dir := t.TempDir()
	for file, want := range map[string]string{
		"pod.yaml": ":2: not a Node (kind: Pod)",
		"two.yaml": ": holds 2 documents (separated by ---); want one Node",
	} {
		body := map[string]string{
			"pod.yaml": "apiVersion: v1\nkind: Pod\nspec:\n  containers: []\n",
			"two.yaml": "apiVersion: v1\nkind: Node\n---\napiVersion: v1\nkind: Node\nmetadata: {labels: {a: b}}\n",
		}[file]
		path := filepath.Join(dir, file)
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		f := &nodeFlags{template: path}
		if _, err := f.options(nil, 1, 0); err == nil || err.Error() != "--node-template "+path+want {
			t.Errorf("%s: %v, want --node-template %s%s", file, err, path, want)
		}
	}
}
