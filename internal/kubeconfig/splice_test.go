package kubeconfig

import (
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ours is a kubeconfig with one cluster, user and context called name, as
// kubesim makes it for a cluster.
func ours(t *testing.T, name, server string) []byte {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: "secret"}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	cfg.CurrentContext = name
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// merged is text with the kubeconfig of name merged in.
func merged(t *testing.T, text, name, server string) string {
	t.Helper()
	d, err := newDoc([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Merge(ours(t, name, server), name); err != nil {
		t.Fatal(err)
	}
	return string(d.data)
}

// load reads text as client-go does, failing the test if it cannot.
func load(t *testing.T, text string) *clientcmdapi.Config {
	t.Helper()
	cfg, err := clientcmd.Load([]byte(text))
	if err != nil {
		t.Fatalf("client-go cannot read the result: %v\n%s", err, text)
	}
	return cfg
}

const prod = `apiVersion: v1
clusters:
- cluster:
    server: https://prod:6443
  name: prod
contexts:
- context:
    cluster: prod
    user: prod
  name: prod
current-context: prod
kind: Config
users:
- name: prod
  user:
    token: t
`

func TestMergeIntoEmptyKubeconfigs(t *testing.T) {
	for name, text := range map[string]string{
		"missing":         "",
		"only a comment":  "# nothing yet\n",
		"client-go empty": "apiVersion: v1\nclusters: null\ncontexts: []\ncurrent-context: \"\"\nkind: Config\npreferences: {}\nusers: null\n",
	} {
		got := merged(t, text, "kubesim-a", "https://127.0.0.1:1")
		cfg := load(t, got)
		if cfg.CurrentContext != "kubesim-a" || cfg.Clusters["kubesim-a"].Server != "https://127.0.0.1:1" || cfg.AuthInfos["kubesim-a"] == nil {
			t.Errorf("%s: merged into\n%s", name, got)
		}
		if !strings.HasPrefix(got, strings.Split(text, "clusters:")[0]) {
			t.Errorf("%s: the lines before the first list changed:\n%s", name, got)
		}
	}
}

func TestMergeAgainReplacesOnlyItsOwnLines(t *testing.T) {
	once := merged(t, merged(t, prod, "kubesim-a", "https://127.0.0.1:1"), "kubesim-b", "https://127.0.0.1:2")
	twice := merged(t, once, "kubesim-a", "https://127.0.0.1:3")
	want := strings.Replace(strings.Replace(once, "127.0.0.1:1", "127.0.0.1:3", 1), "current-context: kubesim-b", "current-context: kubesim-a", 1)
	if twice != want {
		t.Errorf("merging kubesim-a again gave\n%s\nwant\n%s", twice, want)
	}
}

func TestRemoveUndoesMerge(t *testing.T) {
	text := merged(t, prod, "kubesim-a", "https://127.0.0.1:1")
	d, _ := newDoc([]byte(text))
	for i, want := range []bool{true, false} {
		had, err := d.Remove("kubesim-a")
		if err != nil || had != want {
			t.Errorf("Remove #%d = %v, %v; want %v", i+1, had, err, want)
		}
	}
	if got, want := string(d.data), strings.Replace(prod, "current-context: prod", `current-context: ""`, 1); got != want {
		t.Errorf("merge then remove gave\n%s\nwant\n%s", got, want)
	}
	// Removing the only entries leaves lists client-go reads as empty.
	d, _ = newDoc([]byte(merged(t, "", "kubesim-a", "https://127.0.0.1:1")))
	if _, err := d.Remove("kubesim-a"); err != nil {
		t.Fatal(err)
	}
	if cfg := load(t, string(d.data)); len(cfg.Clusters)+len(cfg.Contexts)+len(cfg.AuthInfos) != 0 {
		t.Errorf("entries left: %+v", cfg)
	}
}

// Layouts lines cannot be spliced into are re-encoded: content kept.
func TestMergeIntoOtherLayoutsKeepsTheirContent(t *testing.T) {
	for name, text := range map[string]string{
		"json":       `{"apiVersion":"v1","kind":"Config","clusters":[{"name":"prod","cluster":{"server":"https://prod:6443"}}],"contexts":[{"name":"prod","context":{"cluster":"prod","user":"prod","namespace":"team"}}],"current-context":"prod"}`,
		"flow lists": "apiVersion: v1\nkind: Config\nclusters: [{name: prod, cluster: {server: 'https://prod:6443'}}]\ncontexts: [{name: prod, context: {cluster: prod, user: prod, namespace: team}}]\n",
		"dash alone": "apiVersion: v1\nkind: Config\nclusters:\n-\n  name: prod\n  cluster:\n    server: https://prod:6443\ncontexts:\n-\n  name: prod\n  context:\n    cluster: prod\n    user: prod\n    namespace: team\n",
		"indented":   "apiVersion: v1\nkind: Config\nclusters:\n    -   name: prod\n        cluster:\n            server: https://prod:6443\ncontexts:\n  - name: prod\n    context: {cluster: prod, user: prod, namespace: team}\n",
	} {
		got := merged(t, text, "kubesim-a", "https://127.0.0.1:1")
		cfg := load(t, got)
		if cfg.Clusters["prod"] == nil || cfg.Clusters["prod"].Server != "https://prod:6443" || cfg.Contexts["prod"] == nil ||
			cfg.Contexts["prod"].Namespace != "team" || cfg.Contexts["kubesim-a"] == nil || cfg.CurrentContext != "kubesim-a" {
			t.Errorf("%s: merged into\n%s", name, got)
		}
	}
}

func TestNotAKubeconfig(t *testing.T) {
	for text, want := range map[string]string{
		"clusters: [unclosed\n": "not valid YAML",
		"- a\n- b\n":            "top level is not a mapping",
	} {
		if _, err := newDoc([]byte(text)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("newDoc(%q) = %v, want an error containing %q", text, err, want)
		}
	}
	d, _ := newDoc([]byte("clusters: 3\n"))
	if err := d.Merge(ours(t, "kubesim-a", "https://127.0.0.1:1"), "kubesim-a"); err == nil || !strings.Contains(err.Error(), "clusters (line 1) is not a list") {
		t.Errorf("merging into clusters: 3 = %v", err)
	}
}

// Update replaces a merged context's entries in place, leaving the current
// context and everything else as they were; it brings back no context
// that is not there.
func TestUpdateReplacesOnlyAContextThatIsThere(t *testing.T) {
	text := merged(t, merged(t, prod, "kubesim-a", "https://127.0.0.1:1"), "kubesim-b", "https://127.0.0.1:2")
	d, _ := newDoc([]byte(text))
	if had, err := d.Update(ours(t, "kubesim-a", "https://127.0.0.1:3"), "kubesim-a"); err != nil || !had {
		t.Fatalf("Update = %v, %v", had, err)
	}
	if got, want := string(d.data), strings.Replace(text, "127.0.0.1:1", "127.0.0.1:3", 1); got != want {
		t.Errorf("update gave\n%s\nwant\n%s", got, want)
	}
	d, _ = newDoc([]byte(prod))
	if had, err := d.Update(ours(t, "kubesim-a", "https://127.0.0.1:3"), "kubesim-a"); err != nil || had || d.changed {
		t.Errorf("Update of a context not there = %v, %v; changed %v", had, err, d.changed)
	}
}
