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
	id := component.Identity{File: "component", User: "kubesim:component", Groups: []string{"system:nodes"}}
	d := writeCluster(t, "blue", []component.Component{{Name: "component", Identity: &id}})
	verify := func(name string) error { return verifyClient(t, d, EtcdCAFile(d), name) }
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

// writeCluster writes the credentials of a cluster of that name with comps
// into a temporary directory.
func writeCluster(t *testing.T, name string, comps []component.Component) clusterdir.Dir {
	t.Helper()
	c := &v1alpha1.Cluster{Name: name}
	c.SetDefaults()
	c.Status = &v1alpha1.ClusterStatus{Ports: v1alpha1.Ports{{Component: v1alpha1.APIServerComponent, Port: 6443}}}
	d := clusterdir.For(t.TempDir(), c.Name)
	if err := os.MkdirAll(d.Path, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := Write(d, c, comps); err != nil {
		t.Fatal(err)
	}
	return d
}

// verifyClient verifies pki/<name>.crt as a client certificate of the CA
// in caFile.
func verifyClient(t *testing.T, d clusterdir.Dir, caFile, name string) error {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AddCert(readCert(t, caFile))
	_, err := readCert(t, Path(d, name+".crt")).Verify(x509.VerifyOptions{
		Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	return err
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

// The front-proxy CA signs only the API server's front-proxy client
// certificate, so aggregated APIs trust request headers from it alone and
// the API server's request-header authenticator verifies no other client
// certificate's chain; a cluster made before it gets it at its next start.
func TestFrontProxyHasItsOwnCA(t *testing.T) {
	d := writeCluster(t, "green", nil)
	check := func(when string) {
		t.Helper()
		verify := func(name string) error { return verifyClient(t, d, FrontProxyCAFile(d), name) }
		client := readCert(t, Path(d, FrontProxyClient+".crt"))
		if err := verify(FrontProxyClient); err != nil || client.Subject.CommonName != FrontProxyClientUser {
			t.Errorf("%s: the front-proxy client certificate (%s) is not of the front-proxy CA: %v", when, client.Subject.CommonName, err)
		}
		for _, name := range []string{Admin, APIServer, EtcdClient} {
			if verify(name) == nil {
				t.Errorf("%s: %s's certificate would be a front proxy", when, name)
			}
		}
		if info, err := os.Stat(Path(d, FrontProxyCA+".key")); err != nil {
			t.Errorf("%s: the front-proxy CA's key: %v", when, err)
		} else if info.Mode().Perm() != 0o600 {
			t.Errorf("%s: the front-proxy CA's key has mode %v, not 0600", when, info.Mode().Perm())
		}
	}
	check("made by Write")

	// A cluster of an older kubesim: no front-proxy CA.
	for _, f := range []string{FrontProxyCA + ".crt", FrontProxyCA + ".key", FrontProxyClient + ".crt", FrontProxyClient + ".key"} {
		if err := os.Remove(Path(d, f)); err != nil {
			t.Fatal(err)
		}
	}
	if err := IssueMissing(d, nil); err != nil {
		t.Fatal(err)
	}
	check("issued by IssueMissing")
}
