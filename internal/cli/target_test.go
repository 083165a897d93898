package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/cluster"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/credentials"
)

// fakeCluster lays out what a stopped cluster has of interest here: its
// config and its CA.
func fakeCluster(t *testing.T, home, name string) {
	t.Helper()
	d := clusterdir.For(home, name)
	if err := os.MkdirAll(d.PKI(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(credentials.CAFile(d), []byte("CA of "+name), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := d.Save(&v1alpha1.Cluster{Name: name, Status: &v1alpha1.ClusterStatus{}}); err != nil {
		t.Fatal(err)
	}
}

// writeKubeconfig writes a kubeconfig with a context for each of ca's
// names (a kubesim cluster's context trusting that CA) and a context
// "prod" of another cluster, current is current.
func writeKubeconfig(t *testing.T, path, current string, ca map[string]string) {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["prod"] = &clientcmdapi.Cluster{Server: "https://prod.example:6443"}
	cfg.AuthInfos["prod"] = &clientcmdapi.AuthInfo{Token: "t"}
	cfg.Contexts["prod"] = &clientcmdapi.Context{Cluster: "prod", AuthInfo: "prod"}
	for context, data := range ca {
		cfg.Clusters[context] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1", CertificateAuthorityData: []byte(data)}
		cfg.AuthInfos[context] = &clientcmdapi.AuthInfo{Token: "t"}
		cfg.Contexts[context] = &clientcmdapi.Context{Cluster: context, AuthInfo: context}
	}
	cfg.CurrentContext = current
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
}

// targetArgs are the arguments each command aimed at one cluster needs to
// get as far as choosing it. A command with --name missing here fails the
// test: add it, so that it is held to the rule too.
var targetArgs = map[string][]string{
	"kubesim delete cluster":     nil,
	"kubesim start cluster":      nil,
	"kubesim stop cluster":       nil,
	"kubesim upgrade cluster":    {"--kubernetes", "1.36"},
	"kubesim get kubeconfig":     nil,
	"kubesim get cost":           nil,
	"kubesim explain node":       {"kwok-default-x2x4k"},
	"kubesim scale node":         {"--replicas", "3"},
	"kubesim node stop":          {"node-000000"},
	"kubesim node start":         {"node-000000"},
	"kubesim deschedule":         {"--profile", "TopologyAndDuplicates"},
	"kubesim explain pod":        {"web-0"},
	"kubesim explain deployment": {"web"},
	"kubesim explain workload":   {"train"},
	"kubesim kueue simulate":     {"-f", "job.yaml"},
	"kubesim logs":               {"etcd"},
	"kubesim ui":                 nil,
	"kubesim snapshot save":      {"--path", "s.db"},
	"kubesim snapshot restore":   {"--path", "s.db"},
}

// commandsWithName are the commands that take --name for the cluster they
// act on: all but create, whose --name names the new cluster.
func commandsWithName(t *testing.T) []*cobra.Command {
	var found []*cobra.Command
	var visit func(*cobra.Command)
	visit = func(c *cobra.Command) {
		if c.Flags().Lookup("name") != nil && c.CommandPath() != "kubesim create cluster" {
			found = append(found, c)
		}
		for _, sub := range c.Commands() {
			visit(sub)
		}
	}
	visit(NewRootCommand())
	if len(found) != len(targetArgs) {
		t.Errorf("%d commands take --name, %d are in targetArgs", len(found), len(targetArgs))
	}
	return found
}

// Every command aimed at one cluster chooses it by the one rule: --name,
// else the current context's when it is a kubesim cluster's (of this home,
// trusting its CA), else "kubesim"; and without --name says which, first.
func TestEveryCommandChoosesItsClusterByOneRule(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	t.Setenv("KUBESIM_HOME", home)
	for _, name := range []string{"kubesim", "pdb", "blue"} {
		fakeCluster(t, home, name)
	}
	ca := map[string]string{
		"kubesim-pdb":     "CA of pdb",
		"kubesim-blue":    "CA of blue",
		"kubesim-kubesim": "CA of kubesim",
		"kubesim-gone":    "CA of gone",     // no such cluster here
		"kubesim-stale":   "CA of an older", // left by a cluster since made anew
	}
	fakeCluster(t, home, "stale")
	userConfig, otherConfig := filepath.Join(dir, "config"), filepath.Join(dir, "other")
	t.Setenv("KUBECONFIG", userConfig)
	writeKubeconfig(t, otherConfig, "kubesim-blue", ca)

	for _, tc := range []struct {
		current string
		flags   []string
		want    string // the first line
	}{
		{"kubesim-pdb", nil, `Cluster "pdb" (current context kubesim-pdb)`},
		{"kubesim-pdb", []string{"--name", "blue"}, `Cluster "blue" (--name)`},
		{"kubesim-pdb", []string{"--name", "kubesim"}, `Cluster "kubesim" (--name)`},
		{"kubesim-pdb", []string{"--kubeconfig", otherConfig}, `Cluster "blue" (current context kubesim-blue)`},
		{"prod", nil, `Cluster "kubesim" (default; current context "prod" is not a kubesim cluster's)`},
		{"prod", []string{"--name", "pdb"}, `Cluster "pdb" (--name)`},
		{"", nil, `Cluster "kubesim" (default; no current context)`},
		{"kubesim-gone", nil, `Cluster "kubesim" (default; current context kubesim-gone: no cluster "gone" in ` + home + `)`},
		{"kubesim-stale", nil, `Cluster "kubesim" (default; current context kubesim-stale is not cluster "stale" of ` + home + ` (another CA))`},
	} {
		writeKubeconfig(t, userConfig, tc.current, ca)
		for _, c := range commandsWithName(t) {
			path := c.CommandPath()
			extra, ok := targetArgs[path]
			if !ok {
				t.Errorf("%q takes --name but is not in targetArgs", path)
				continue
			}
			args := append(append(strings.Fields(path)[1:], extra...), tc.flags...)
			var got cluster.Target
			root := NewRootCommand()
			var out, errOut strings.Builder
			root.SetOut(&out)
			root.SetErr(&errOut)
			root.SetArgs(args)
			err := root.ExecuteContext(context.WithValue(context.Background(), targetOnly{}, &got))
			if !errors.Is(err, errTargetOnly) {
				t.Errorf("kubesim %s (current context %q): %v; want it to choose a cluster", strings.Join(args, " "), tc.current, err)
				continue
			}
			said := tc.want // without --name, the command says which first
			if slices.Contains(tc.flags, "--name") {
				said = "" // with it, the user did
			}
			if first, _, _ := strings.Cut(errOut.String(), "\n"); first != said || got.String() != tc.want {
				t.Errorf("kubesim %s (current context %q): first line %q, chose %q; want %q, %q", strings.Join(args, " "), tc.current, first, got, said, tc.want)
			}
		}
	}

	// The embedded kubectl follows the same rule, saying which cluster
	// only when it cannot run against it.
	for current, want := range map[string]string{
		"kubesim-pdb": `cluster "pdb" is stopped`,
		"prod":        `cluster "kubesim" is stopped`,
	} {
		writeKubeconfig(t, userConfig, current, ca)
		root := NewRootCommand()
		var errOut strings.Builder
		root.SetErr(&errOut)
		root.SetArgs([]string{"kubectl", "get", "ns"})
		if err := root.Execute(); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("kubectl with current context %q: %v; want %q", current, err, want)
		}
	}
}

// A command that chose no cluster of the user's (no --name) and found
// the default one gone says so, and which clusters there are, rather than
// that "kubesim" does not exist: deleting the current context's cluster
// unsets the current context, and the next command falls back to it.
func TestGoneCurrentClusterListsTheOthers(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	t.Setenv("KUBESIM_HOME", home)
	kubeconfig := filepath.Join(dir, "config")
	t.Setenv("KUBECONFIG", kubeconfig)
	run := func(args ...string) error {
		root := NewRootCommand()
		root.SetOut(&strings.Builder{})
		root.SetErr(&strings.Builder{})
		root.SetArgs(args)
		return root.Execute()
	}
	choose := "clusters: a, b (use --name or kubectl config use-context kubesim-a)"
	// No cluster at all: said so, with how to make one.
	writeKubeconfig(t, kubeconfig, "", nil)
	if err := run("stop", "cluster"); err == nil || err.Error() != `cluster "kubesim" does not exist, and there are no clusters (kubesim create cluster makes one)` {
		t.Errorf("no clusters: %v", err)
	}
	fakeCluster(t, home, "a")
	fakeCluster(t, home, "b")
	for current, want := range map[string]string{
		"":                `no current context (deleting the current context's cluster unsets it), and there is no cluster "kubesim" to default to; ` + choose,
		"kubesim-kubesim": `the current context's cluster "kubesim" is gone, and there is no cluster "kubesim" to default to; ` + choose,
		"kubesim-c":       `the current context's cluster "c" is gone, and there is no cluster "kubesim" to default to; ` + choose,
		"prod":            `current context "prod" is not a kubesim cluster's, and there is no cluster "kubesim" to default to; ` + choose,
	} {
		writeKubeconfig(t, kubeconfig, current, map[string]string{"kubesim-kubesim": "CA of kubesim", "kubesim-c": "CA of c"})
		for _, args := range [][]string{{"stop", "cluster"}, {"logs", "etcd"}, {"get", "kubeconfig"}, {"kubectl", "get", "ns"}} {
			if err := run(args...); err == nil || err.Error() != want {
				t.Errorf("kubesim %s, current context %q: %v, want %q", strings.Join(args, " "), current, err, want)
			}
		}
	}
	// --name is the user's choice: the plain error.
	if err := run("stop", "cluster", "--name", "kubesim"); err == nil || err.Error() != `cluster "kubesim" does not exist (kubesim get clusters lists them)` {
		t.Errorf("--name of a missing cluster: %v", err)
	}
}
