package credentials

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"testing"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/component"
)

// etcd trusts its own CA, which signs only etcd's serving certificate and
// the API server's client certificate: a certificate of the cluster CA (a
// component's, or one the controller-manager signs) is not an etcd client.
func TestEtcdHasItsOwnCA(t *testing.T) {
	c := &v1alpha1.Cluster{Name: "blue"}
	c.SetDefaults()
	c.Status = &v1alpha1.ClusterStatus{Ports: v1alpha1.Ports{{Component: v1alpha1.APIServerComponent, Port: 6443}}}
	d := clusterdir.For(t.TempDir(), c.Name)
	if err := os.MkdirAll(d.Path, 0o700); err != nil {
		t.Fatal(err)
	}
	id := component.Identity{File: "component", User: "kubesim:component", Groups: []string{"system:nodes"}}
	if err := Write(d, c, []component.Component{{Name: "component", Identity: &id}}); err != nil {
		t.Fatal(err)
	}
	etcdCA := x509.NewCertPool()
	etcdCA.AddCert(readCert(t, EtcdCAFile(d)))
	verify := func(name string) error {
		_, err := readCert(t, Path(d, name+".crt")).Verify(x509.VerifyOptions{
			Roots: etcdCA, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		})
		return err
	}
	if err := verify(EtcdClient); err != nil {
		t.Errorf("the API server's etcd client certificate is not trusted by etcd: %v", err)
	}
	for _, name := range []string{Admin, id.File, APIServer} {
		if verify(name) == nil {
			t.Errorf("%s's certificate would be an etcd client", name)
		}
	}
	if EtcdCAFile(d) == CAFile(d) {
		t.Error("etcd trusts the cluster CA")
	}
}

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatalf("%s holds no PEM", path)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}
