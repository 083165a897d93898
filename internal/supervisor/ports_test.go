package supervisor

import (
	"log"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/component"
	"github.com/kubesim/kubesim/internal/controlplane"
	"github.com/kubesim/kubesim/internal/credentials"
)

// portMoveCluster is a cluster's files, as create writes them, and a
// supervisor of it that logs to logs; the user's kubeconfig at kubeconfig
// holds the context of another cluster, current, and the cluster's own.
func portMoveCluster(t *testing.T, kubeconfig string, logs *strings.Builder) (*supervisor, *v1alpha1.Cluster) {
	t.Helper()
	c := &v1alpha1.Cluster{Name: "blue"}
	c.SetDefaults()
	c.Status = &v1alpha1.ClusterStatus{}
	if err := controlplane.AssignPorts(c); err != nil {
		t.Fatal(err)
	}
	d := clusterdir.For(t.TempDir(), c.Name)
	if err := os.MkdirAll(d.Path, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := credentials.Write(d, c, controlplane.Components()); err != nil {
		t.Fatal(err)
	}
	if err := credentials.WriteKubeconfigs(d, c, controlplane.Identities()); err != nil {
		t.Fatal(err)
	}
	if err := d.Save(c); err != nil {
		t.Fatal(err)
	}
	user, err := credentials.AdminKubeconfig(d, c)
	if err != nil {
		t.Fatal(err)
	}
	user.Clusters["prod"] = &clientcmdapi.Cluster{Server: "https://prod.example:6443"}
	user.AuthInfos["prod"] = &clientcmdapi.AuthInfo{Token: "t"}
	user.Contexts["prod"] = &clientcmdapi.Context{Cluster: "prod", AuthInfo: "prod", Namespace: "team"}
	user.CurrentContext = "prod"
	if err := clientcmd.WriteToFile(*user, kubeconfig); err != nil {
		t.Fatal(err)
	}
	return &supervisor{dir: d, cfg: c, logger: log.New(logs, "", 0)}, c
}

// apiServer is the API server's entry of the component table.
func apiServer(t *testing.T) component.Component {
	t.Helper()
	all := controlplane.Components()
	i := slices.IndexFunc(all, func(c component.Component) bool { return c.Name == "kube-apiserver" })
	if i < 0 {
		t.Fatal("no kube-apiserver component")
	}
	return all[i]
}

// takePort listens on port as another process would.
func takePort(t *testing.T, port int) {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(credentials.Loopback, strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
}

// When the API server's port is taken at a restart, the supervisor moves
// it and points the cluster's context in the user's kubeconfig at the new
// port; the other contexts, and which one is current, stay as they were.
func TestAPIServerPortMoveUpdatesTheUsersKubeconfig(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "config")
	var logs strings.Builder
	s, c := portMoveCluster(t, kubeconfig, &logs)
	if err := credentials.RecordUserKubeconfig(s.dir, kubeconfig); err != nil {
		t.Fatal(err)
	}
	old := c.Status.Ports.APIServer()
	takePort(t, old)
	moved, err := s.ensurePortsFree(apiServer(t))
	if err != nil || !moved {
		t.Fatalf("ensurePortsFree = %v, %v; want a move", moved, err)
	}
	now := s.config().Status.Ports.APIServer()
	if now == old {
		t.Fatalf("API server still on taken port %d", old)
	}
	got, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	want := "https://127.0.0.1:" + strconv.Itoa(now)
	server := "(no cluster)"
	if cl := got.Clusters["kubesim-blue"]; cl != nil {
		server = cl.Server
	}
	if server != want {
		t.Errorf("context kubesim-blue's server is %s, want %s\nlog: %s", server, want, logs.String())
	}
	if got.CurrentContext != "prod" {
		t.Errorf("current context is %q, want prod as it was", got.CurrentContext)
	}
	if cl, ctx := got.Clusters["prod"], got.Contexts["prod"]; cl == nil || cl.Server != "https://prod.example:6443" || ctx == nil || ctx.Namespace != "team" || got.AuthInfos["prod"].Token != "t" {
		t.Errorf("context prod changed: %+v %+v", cl, ctx)
	}
	if info, err := os.Stat(kubeconfig); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("kubeconfig mode %v (%v), want 0600", info.Mode().Perm(), err)
	}
	if !strings.Contains(logs.String(), "updated context kubesim-blue in "+kubeconfig) {
		t.Errorf("the log does not say so: %s", logs.String())
	}
}

// A cluster that does not say where its context is (made by an older
// kubesim, not started since) moves its port all the same, and says why
// the user's kubeconfig is left as it was.
func TestAPIServerPortMoveWithoutARecordedKubeconfig(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "config")
	var logs strings.Builder
	s, c := portMoveCluster(t, kubeconfig, &logs)
	before, _ := os.ReadFile(kubeconfig)
	takePort(t, c.Status.Ports.APIServer())
	if moved, err := s.ensurePortsFree(apiServer(t)); err != nil || !moved {
		t.Fatalf("ensurePortsFree = %v, %v; want a move", moved, err)
	}
	if after, _ := os.ReadFile(kubeconfig); string(after) != string(before) {
		t.Errorf("a kubeconfig the cluster did not record was changed")
	}
	if !strings.Contains(logs.String(), "does not say which kubeconfig holds its context kubesim-blue") {
		t.Errorf("the log does not say why the kubeconfig was left: %s", logs.String())
	}
}
