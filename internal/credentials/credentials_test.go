package controlplane

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"testing"
)

// etcd trusts its own CA, which signs only etcd's serving certificate and
// the API server's client certificate: a certificate of the cluster CA (a
// component's, or one the controller-manager signs) is not an etcd client.
func TestEtcdHasItsOwnCA(t *testing.T) {
	_, c := testCluster()
	d := tempCluster(t, c.Name)
	if err := WriteCredentials(d, c); err != nil {
		t.Fatal(err)
	}
	etcdCA := x509.NewCertPool()
	etcdCA.AddCert(readCert(t, etcdCAFile(d)))
	verify := func(name string) error {
		_, err := readCert(t, pkiPath(d, name+".crt")).Verify(x509.VerifyOptions{
			Roots: etcdCA, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		})
		return err
	}
	if err := verify(etcdClientName); err != nil {
		t.Errorf("the API server's etcd client certificate is not trusted by etcd: %v", err)
	}
	for _, name := range []string{adminName, controllerMgrName, kubeletSimName, apiServerName} {
		if verify(name) == nil {
			t.Errorf("%s's certificate would be an etcd client", name)
		}
	}
	if etcdCAFile(d) == pkiPath(d, caName+".crt") {
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
