package pki

import (
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"testing"
)

func TestIssuedCertificateVerifiesAgainstCA(t *testing.T) {
	ca, err := NewCA("test-ca")
	if err != nil {
		t.Fatal(err)
	}
	server, err := ca.Issue(CertSpec{CommonName: "srv", DNSNames: []string{"localhost"}, IPs: []net.IP{net.ParseIP("127.0.0.1")}, Server: true})
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	if _, err := server.Cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: "localhost", KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		t.Errorf("server certificate does not verify for localhost: %v", err)
	}
	if _, err := server.Cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Error("a server-only certificate verified as a client certificate")
	}

	client, err := ca.Issue(CertSpec{CommonName: "system:kube-scheduler", Organizations: []string{"grp"}, Client: true})
	if err != nil {
		t.Fatal(err)
	}
	if client.Cert.Subject.CommonName != "system:kube-scheduler" || client.Cert.Subject.Organization[0] != "grp" {
		t.Errorf("client subject %v", client.Cert.Subject)
	}
	if _, err := client.Cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("client certificate does not verify: %v", err)
	}

	other, _ := NewCA("other-ca")
	otherRoots := x509.NewCertPool()
	otherRoots.AddCert(other.Cert)
	if _, err := client.Cert.Verify(x509.VerifyOptions{Roots: otherRoots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Error("certificate verified against a foreign CA")
	}
}

func TestWriteAndLoadKeepOwnerOnlyModes(t *testing.T) {
	dir := t.TempDir()
	ca, err := NewCA("ca")
	if err != nil {
		t.Fatal(err)
	}
	if err := ca.Write(dir, "ca"); err != nil {
		t.Fatal(err)
	}
	if err := WriteServiceAccountKey(dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"ca.crt", "ca.key", "sa.key", "sa.pub"} {
		info, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %o, want 600", f, info.Mode().Perm())
		}
	}
	loaded, err := Load(dir, "ca")
	if err != nil {
		t.Fatal(err)
	}
	if !loaded.Cert.Equal(ca.Cert) {
		t.Error("loaded certificate differs from the written one")
	}
	if _, err := loaded.Issue(CertSpec{CommonName: "x", Client: true}); err != nil {
		t.Errorf("loaded CA cannot sign: %v", err)
	}
}
