package controlplane

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/credentials"
	"github.com/kubesim/kubesim/internal/dpdb"
	"github.com/kubesim/kubesim/internal/version"
)

// newCluster writes a new cluster's credentials, as create does.
func newCluster(t *testing.T) (clusterdir.Dir, *v1alpha1.Cluster) {
	t.Helper()
	_, c := testCluster()
	d := clusterdir.For(t.TempDir(), c.Name)
	if err := os.MkdirAll(d.Path, 0o700); err != nil {
		t.Fatal(err)
	}
	c.Status.AuditPolicy, c.Status.DeschedulerPolicy = DefaultAuditPolicy, "kind: DeschedulerPolicy\n"
	c.Status.FormatVersion = FormatVersion
	if err := credentials.Write(d, c, Components()); err != nil {
		t.Fatal(err)
	}
	return d, c
}

func TestPrepareWritesTheFilesComponentsRead(t *testing.T) {
	d, c := newCluster(t)
	for _, comp := range Components() {
		if comp.Prepare != nil {
			if err := comp.Prepare(d, c); err != nil {
				t.Fatalf("%s: %v", comp.Name, err)
			}
		}
	}
	for path, want := range map[string]string{
		d.AuditPolicy():        "kind: Policy",
		egressConfigFile(d):    egressSocket(d),
		schedulerConfigFile(d): d.ComponentKubeconfig(schedulerIdentity.File),
		d.DeschedulerPolicy():  "kind: DeschedulerPolicy",
	} {
		data, err := os.ReadFile(path)
		if err != nil || !strings.Contains(string(data), want) {
			t.Errorf("%s: %q (%v), want it to hold %q", path, data, err, want)
		}
		if info, err := os.Stat(path); err == nil && info.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %o, want 600", path, info.Mode().Perm())
		}
	}
}

// A cluster made before formats were kept — without etcd's own CA, the
// dpdb controller's identity and certificate, the explain endpoint's
// certificate and their ports, its policies only in its files — is brought
// up to date at its start: its format once, what its components declare
// by GiveDeclared, as at every start.
func TestUpgradeBringsAnUnversionedClusterUpToDate(t *testing.T) {
	d, c := newCluster(t)
	c.Status.FormatVersion = 0
	c.Status.Ports = slices.DeleteFunc(c.Status.Ports, func(p v1alpha1.Port) bool {
		return p.Component == dpdb.ComponentName || p.Name == ExplainPortName
	})
	c.Status.AuditPolicy, c.Status.DeschedulerPolicy = "", ""
	for _, f := range []string{"etcd-ca.crt", dpdb.ComponentName + ".crt", "dpdb-webhook.crt", "scheduler-explain.crt"} {
		if err := os.Remove(credentials.Path(d, f)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(d.AuditPolicy(), []byte("custom"), 0o600); err != nil {
		t.Fatal(err)
	}

	changed, err := Upgrade(d, c)
	if err != nil || !changed {
		t.Fatalf("Upgrade: changed %v, %v", changed, err)
	}
	if given, err := GiveDeclared(d, c); err != nil || !given {
		t.Fatalf("GiveDeclared: changed %v, %v", given, err)
	}
	webhook, explain := c.Status.Ports.Get(dpdb.ComponentName, ""), ExplainPort(c)
	if c.Status.FormatVersion != FormatVersion || webhook == 0 || explain == 0 || webhook == explain {
		t.Errorf("status after the upgrade: %+v", c.Status)
	}
	if c.Status.AuditPolicy != "custom" || c.Status.DeschedulerPolicy != "" {
		t.Errorf("policies after the upgrade: %q, %q (want the file's, and none for a file never written)",
			c.Status.AuditPolicy, c.Status.DeschedulerPolicy)
	}
	for _, f := range []string{"etcd-ca.crt", credentials.EtcdServer + ".crt", dpdb.ComponentName + ".crt", "dpdb-webhook.crt", "scheduler-explain.crt"} {
		if !credentials.Exists(credentials.Path(d, f)) {
			t.Errorf("%s missing after the upgrade", f)
		}
	}
	if data, err := os.ReadFile(d.ComponentKubeconfig(dpdb.ComponentName)); err != nil || !strings.Contains(string(data), "client-certificate-data") {
		t.Errorf("the dpdb controller's kubeconfig: %v", err)
	}
	if changed, err := Upgrade(d, c); changed || err != nil {
		t.Errorf("a second Upgrade: changed %v, %v", changed, err)
	}
	c.Status.FormatVersion = FormatVersion + 1
	if _, err := Upgrade(d, c); err == nil || !strings.Contains(err.Error(), "newer kubesim") {
		t.Errorf("a cluster of a newer format: %v", err)
	}
}

// The patch create waits on for the controller-manager exists under that
// name: renamed, a make build would silently stop waiting.
func TestControllerManagerSyncedPatchExists(t *testing.T) {
	if _, err := os.Stat(filepath.Join("..", "..", "patches", controllerManagerSyncedPatch)); err != nil {
		t.Fatalf("controllerManagerSyncedPatch names no patch: %v", err)
	}
}

// With the patch, the controller-manager is ready once its synced file
// exists; without it (a go install build) at once, there being no file to
// wait for.
func TestControllerManagerSynced(t *testing.T) {
	old := version.Patches
	defer func() { version.Patches = old }()
	d := clusterdir.Dir{Path: t.TempDir()}

	version.Patches = ""
	if err := controllerManagerSynced(t.Context(), d, &v1alpha1.Cluster{}); err != nil {
		t.Errorf("without patch 0004: %v, want ready at once", err)
	}
	version.Patches = "k8s.io/kubernetes/0001-x.patch," + controllerManagerSyncedPatch
	if err := controllerManagerSynced(t.Context(), d, &v1alpha1.Cluster{}); err == nil {
		t.Error("with patch 0004 and no synced file: ready, want not yet")
	}
	if err := os.WriteFile(controllerManagerSyncedFile(d), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := controllerManagerSynced(t.Context(), d, &v1alpha1.Cluster{}); err != nil {
		t.Errorf("with patch 0004 and the synced file: %v, want ready", err)
	}
	if err := removeControllerManagerSynced(d, nil); err != nil {
		t.Fatal(err)
	}
	if err := controllerManagerSynced(t.Context(), d, &v1alpha1.Cluster{}); err == nil {
		t.Error("ready after the synced file was removed for a new start")
	}
}
