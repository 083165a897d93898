package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
)

// newTestCluster lays out a cluster's files (no processes) under a temp home.
func newTestCluster(t *testing.T, p *Provider, name string) clusterdir.Dir {
	t.Helper()
	c := &v1alpha1.Cluster{Name: name}
	c.SetDefaults()
	c.Status = &v1alpha1.ClusterStatus{}
	d := clusterdir.For(p.Home, name)
	if err := os.MkdirAll(d.Path, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := writeClusterFiles(d, c); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestUseContextMergesAndRemoveContextUnmerges(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "config")
	existing := clientcmdapi.NewConfig()
	existing.Clusters["prod"] = &clientcmdapi.Cluster{Server: "https://prod.example:6443"}
	existing.AuthInfos["prod"] = &clientcmdapi.AuthInfo{Token: "t"}
	existing.Contexts["prod"] = &clientcmdapi.Context{Cluster: "prod", AuthInfo: "prod"}
	existing.CurrentContext = "prod"
	if err := clientcmd.WriteToFile(*existing, kubeconfig); err != nil {
		t.Fatal(err)
	}
	p := &Provider{Home: filepath.Join(dir, "home"), Kubeconfig: kubeconfig, Out: io.Discard}
	blue := newTestCluster(t, p, "blue")
	red := newTestCluster(t, p, "red")

	if err := p.useContext(blue); err != nil {
		t.Fatal(err)
	}
	if err := p.useContext(red); err != nil {
		t.Fatal(err)
	}
	got, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"prod", "kubesim-blue", "kubesim-red"} {
		if got.Contexts[name] == nil {
			t.Errorf("context %s missing after merge", name)
		}
	}
	if got.CurrentContext != "kubesim-red" {
		t.Errorf("current context %q, want kubesim-red", got.CurrentContext)
	}
	if srv := got.Clusters["kubesim-blue"].Server; !strings.HasPrefix(srv, "https://127.0.0.1:") {
		t.Errorf("blue's server %q is not a loopback https URL", srv)
	}
	if len(got.AuthInfos["kubesim-blue"].ClientCertificateData) == 0 {
		t.Error("blue's user has no client certificate")
	}

	// Removing a context that is not current leaves the current one.
	if _, err := p.removeContext("blue"); err != nil {
		t.Fatal(err)
	}
	got, _ = clientcmd.LoadFromFile(kubeconfig)
	if got.Contexts["kubesim-blue"] != nil || got.Clusters["kubesim-blue"] != nil || got.AuthInfos["kubesim-blue"] != nil {
		t.Error("blue's entries survive removal")
	}
	if got.CurrentContext != "kubesim-red" || got.Contexts["prod"] == nil {
		t.Errorf("removing blue disturbed others: current %q, contexts %v", got.CurrentContext, got.Contexts)
	}
	// Removing the current one clears current-context, as kind does.
	if _, err := p.removeContext("red"); err != nil {
		t.Fatal(err)
	}
	got, _ = clientcmd.LoadFromFile(kubeconfig)
	if got.CurrentContext != "" || got.Contexts["prod"] == nil {
		t.Errorf("after removing the current context: current %q, contexts %v", got.CurrentContext, got.Contexts)
	}
	if info, _ := os.Stat(kubeconfig); info.Mode().Perm() != 0o600 {
		t.Errorf("kubeconfig mode %o, want 600", info.Mode().Perm())
	}
}

func TestCheckKubeconfigWritable(t *testing.T) {
	dir := t.TempDir()
	fresh := filepath.Join(dir, "new", "config")
	p := &Provider{Kubeconfig: fresh}
	if err := p.checkKubeconfigWritable(); err != nil {
		t.Fatalf("a new kubeconfig in a new directory: %v", err)
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("the check left a file behind: %v", err)
	}
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	p.Kubeconfig = filepath.Join(blocker, "config")
	if err := p.checkKubeconfigWritable(); err == nil || !strings.Contains(err.Error(), "cannot be written") {
		t.Errorf("kubeconfig beneath a file: %v", err)
	}
	garbage := filepath.Join(dir, "garbage")
	if err := os.WriteFile(garbage, []byte("{{{not yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	p.Kubeconfig = garbage
	if err := p.checkKubeconfigWritable(); err == nil || !strings.Contains(err.Error(), "cannot be read") {
		t.Errorf("unreadable kubeconfig: %v", err)
	}
}

// foreignKubeconfig is a user's kubeconfig as kubectl and hand edits leave
// it: comments, blank lines, odd spacing, extensions and fields client-go
// does not know. None of it is kubesim's.
const foreignKubeconfig = `# Hand-edited; kubesim must keep what is not its own.
apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: AAAA
    server: https://prod.example:6443   # the prod load balancer
    extensions:
    - name: x-vendor.example.com
      extension:
        regions: [eu-west-1,   eu-west-2]
  name: prod

contexts:
- context:
    cluster: prod
    user: prod
    namespace: "team-a"
  name: prod
current-context: prod
kind: Config
preferences:
  colors: true
users:
- name: prod
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: aws
      args: ["eks", "get-token", "--cluster-name", prod]
      interactiveMode: Never
x-unknown-top-level: {kept: 'yes'}
`

// writeKubeconfig writes a user's kubeconfig and returns a provider whose
// contexts go there.
func writeKubeconfig(t *testing.T, content string, mode os.FileMode) (*Provider, string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "config")
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // past the umask
		t.Fatal(err)
	}
	return &Provider{Home: filepath.Join(dir, "home"), Kubeconfig: path, Out: io.Discard}, path
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestMergeKeepsForeignEntriesByteForByte(t *testing.T) {
	p, path := writeKubeconfig(t, foreignKubeconfig, 0o600)
	blue, red := newTestCluster(t, p, "blue"), newTestCluster(t, p, "red")
	for _, d := range []clusterdir.Dir{blue, red} {
		if err := p.useContext(d); err != nil {
			t.Fatal(err)
		}
	}
	merged := readFile(t, path)
	// Every foreign line is still there, in order, between kubesim's own.
	rest := merged
	for _, line := range strings.SplitAfter(strings.Replace(foreignKubeconfig, "current-context: prod\n", "", 1), "\n") {
		i := strings.Index(rest, line)
		if i < 0 {
			t.Fatalf("foreign line %q lost or moved by the merge:\n%s", line, merged)
		}
		rest = rest[i+len(line):]
	}
	if cfg, err := clientcmd.Load([]byte(merged)); err != nil || cfg.CurrentContext != "kubesim-red" || cfg.Contexts["kubesim-blue"] == nil {
		t.Fatalf("merged kubeconfig: %v, %+v", err, cfg)
	}
	for _, name := range []string{"blue", "red"} {
		if _, err := p.removeContext(name); err != nil {
			t.Fatal(err)
		}
	}
	want := strings.Replace(foreignKubeconfig, "current-context: prod", `current-context: ""`, 1)
	if got := readFile(t, path); got != want {
		t.Errorf("after merging and removing two clusters the kubeconfig is\n%s\nwant (only current-context changed)\n%s", got, want)
	}
}

// addForeignContext does what another tool does: under client-go's lock
// file, it reads the kubeconfig, adds a context and writes it back.
func addForeignContext(t *testing.T, path, name string) {
	lock := path + ".lock"
	for {
		f, err := os.OpenFile(lock, os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			f.Close()
			break
		}
		time.Sleep(time.Millisecond) // back off while kubesim holds it
	}
	defer os.Remove(lock)
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Error(err)
		return
	}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: "prod", AuthInfo: "prod"}
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Error(err)
	}
}

func TestConcurrentMergesLoseNothing(t *testing.T) {
	p, path := writeKubeconfig(t, foreignKubeconfig, 0o600)
	blue, red := newTestCluster(t, p, "blue"), newTestCluster(t, p, "red")
	const rounds = 20
	var wg sync.WaitGroup
	for _, d := range []clusterdir.Dir{blue, red} {
		wg.Go(func() {
			for range rounds {
				if err := p.useContext(d); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Go(func() {
		for i := range rounds {
			addForeignContext(t, path, fmt.Sprintf("foreign-%d", i))
		}
	})
	wg.Wait()
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"prod", "kubesim-blue", "kubesim-red"}
	for i := range rounds {
		want = append(want, fmt.Sprintf("foreign-%d", i))
	}
	for _, name := range want {
		if cfg.Contexts[name] == nil {
			t.Errorf("context %s lost", name)
		}
	}
}

func TestStaleLockIsReportedBeforeAnythingIsBuilt(t *testing.T) {
	p, path := writeKubeconfig(t, foreignKubeconfig, 0o600)
	if err := os.WriteFile(path+".lock", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	err := p.Create(context.Background(), &v1alpha1.Cluster{Name: "blue"}, CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "rm "+path+".lock") {
		t.Fatalf("Create with a stale lock = %v, want an error naming %s.lock and how to remove it", err, path)
	}
	if _, statErr := os.Stat(clusterdir.For(p.Home, "blue").Path); !os.IsNotExist(statErr) {
		t.Errorf("Create failed on the lock but left the cluster's directory: %v", statErr)
	}
	if got := readFile(t, path); got != foreignKubeconfig {
		t.Errorf("the kubeconfig changed:\n%s", got)
	}
}

func TestMergeTightensAReadableKubeconfigTo0600(t *testing.T) {
	p, path := writeKubeconfig(t, foreignKubeconfig, 0o644)
	var out strings.Builder
	p.Out = &out
	if err := p.useContext(newTestCluster(t, p, "blue")); err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Errorf("kubeconfig holding an admin key has mode %o, want 600", info.Mode().Perm())
	}
	if !strings.Contains(out.String(), "0644") || !strings.Contains(out.String(), "0600") {
		t.Errorf("no note about the mode change in %q", out.String())
	}
}

// A write that fails half-way, as on a full disk, leaves the kubeconfig as
// it was. The failure is a file size limit, set in a child process (the
// test binary again) so that nothing else in this one is limited.
func TestFailedWriteLeavesKubeconfigIntact(t *testing.T) {
	if home := os.Getenv("KUBESIM_TEST_FSIZE_HOME"); home != "" {
		mergeUnderFileSizeLimit(home, os.Getenv("KUBECONFIG"))
		return
	}
	p, path := writeKubeconfig(t, foreignKubeconfig, 0o600)
	newTestCluster(t, p, "blue")
	child := exec.Command(os.Args[0], "-test.run=^TestFailedWriteLeavesKubeconfigIntact$")
	child.Env = append(os.Environ(), "KUBESIM_TEST_FSIZE_HOME="+p.Home, "KUBECONFIG="+path)
	out, err := child.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "merge failed: ") {
		t.Fatalf("the merge under a file size limit did not fail as it should (%v):\n%s", err, out)
	}
	if got := readFile(t, path); got != foreignKubeconfig {
		t.Errorf("a failed write changed the kubeconfig to:\n%s", got)
	}
}

// mergeUnderFileSizeLimit merges cluster blue with writes past a little
// more than the kubeconfig's size failing (EFBIG), and prints the outcome.
func mergeUnderFileSizeLimit(home, path string) {
	signal.Ignore(syscall.SIGXFSZ) // else it kills the process
	var limit syscall.Rlimit
	err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &limit)
	limit.Cur = uint64(len(foreignKubeconfig) + 100) // the merged file is far larger
	if err := errors.Join(err, syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limit)); err != nil {
		fmt.Println("setting the file size limit:", err)
		return
	}
	p := &Provider{Home: home, Kubeconfig: path, Out: io.Discard}
	if err := p.useContext(clusterdir.For(home, "blue")); err != nil {
		fmt.Println("merge failed:", err)
	}
}

func TestDeleteOfAGoneClusterRemovesItsContext(t *testing.T) {
	p, path := writeKubeconfig(t, foreignKubeconfig, 0o600)
	var out strings.Builder
	p.Out = &out
	blue := newTestCluster(t, p, "blue")
	if err := p.useContext(blue); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(blue.Path); err != nil {
		t.Fatal(err)
	}
	if err := p.Delete(context.Background(), "blue"); err != nil {
		t.Fatalf("deleting a gone cluster whose context is left: %v", err)
	}
	if cfg, _ := clientcmd.LoadFromFile(path); cfg.Contexts["kubesim-blue"] != nil || cfg.Clusters["kubesim-blue"] != nil {
		t.Error("the context of the gone cluster is still there")
	}
	if !strings.Contains(out.String(), `removed its leftover context "kubesim-blue"`) {
		t.Errorf("delete did not say what it did: %q", out.String())
	}
	err := p.Delete(context.Background(), "blue")
	if err == nil || !strings.Contains(err.Error(), `cluster "blue" does not exist`) {
		t.Errorf("deleting it again = %v, want: does not exist", err)
	}
}

// A create that fails after merging its context takes the context out again.
func TestFailedCreateCleanupRemovesItsContext(t *testing.T) {
	p, path := writeKubeconfig(t, foreignKubeconfig, 0o600)
	blue := newTestCluster(t, p, "blue")
	if err := p.useContext(blue); err != nil {
		t.Fatal(err)
	}
	if err := p.remove(context.Background(), blue); err != nil {
		t.Fatal(err)
	}
	if cfg, _ := clientcmd.LoadFromFile(path); cfg.Contexts["kubesim-blue"] != nil || cfg.CurrentContext == "kubesim-blue" {
		t.Errorf("after a failed create's cleanup the kubeconfig still has its context: current %q", cfg.CurrentContext)
	}
	if _, err := os.Stat(blue.Path); !os.IsNotExist(err) {
		t.Errorf("the cluster's files are left: %v", err)
	}
}
