package controlplane

import (
	"os"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/credentials"
	"github.com/kubesim/kubesim/internal/dpdb"
)

func TestPrepareWritesTheFilesComponentsRead(t *testing.T) {
	_, c := testCluster()
	d := clusterdir.For(t.TempDir(), c.Name)
	if err := os.MkdirAll(d.Path, 0o700); err != nil {
		t.Fatal(err)
	}
	c.Status.AuditPolicy, c.Status.DeschedulerPolicy = DefaultAuditPolicy, "kind: DeschedulerPolicy\n"
	// A cluster made before the dpdb controller: its identity is issued
	// by its Prepare.
	if err := credentials.Write(d, c, Identities()); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(pkiPath(d, dpdb.ComponentName+".crt")); err != nil {
		t.Fatal(err)
	}
	for _, comp := range Components() {
		if comp.Prepare != nil {
			if err := comp.Prepare(d, c); err != nil {
				t.Fatalf("%s: %v", comp.Name, err)
			}
		}
	}
	for path, want := range map[string]string{
		d.AuditPolicy():                           "kind: Policy",
		egressConfigFile(d):                       egressSocket(d),
		schedulerConfigFile(d):                    d.ComponentKubeconfig(schedulerIdentity.File),
		d.DeschedulerPolicy():                     "kind: DeschedulerPolicy",
		d.ComponentKubeconfig(dpdb.ComponentName): "client-certificate-data",
		pkiPath(d, dpdb.ComponentName+".crt"):     "CERTIFICATE",
	} {
		data, err := os.ReadFile(path)
		if err != nil || !strings.Contains(string(data), want) {
			t.Errorf("%s: %q (%v), want it to hold %q", path, data, err, want)
		}
		if info, err := os.Stat(path); err == nil && info.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %o, want 600", path, info.Mode().Perm())
		}
	}

	// A cluster made before policies were kept in its status keeps the
	// files written when it was made.
	c.Status.AuditPolicy = ""
	if err := os.WriteFile(d.AuditPolicy(), []byte("custom"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := writeAPIServerFiles(d, c); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(d.AuditPolicy()); string(data) != "custom" {
		t.Errorf("an older cluster's audit policy was replaced by %q", data)
	}
}
