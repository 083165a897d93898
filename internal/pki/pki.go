// Package pki makes the certificate authority, certificates and keys a
// kubesim cluster needs, and writes them as PEM files readable only by
// their owner.
package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"

	"github.com/kubesim/kubesim/internal/clusterclock"
)

// validity of every certificate kubesim issues: simulated clusters are
// short-lived, but a user may keep one for months.
const validity = 10 * 365 * 24 * time.Hour

// KeyPair is a certificate with its private key.
type KeyPair struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// CertPEM returns the certificate PEM-encoded.
func (kp *KeyPair) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: certutil.CertificateBlockType, Bytes: kp.Cert.Raw})
}

// KeyPEM returns the private key PEM-encoded.
func (kp *KeyPair) KeyPEM() ([]byte, error) { return keyutil.MarshalPrivateKeyToPEM(kp.Key) }

// Write stores the pair as dir/name.crt and dir/name.key, both mode 0600.
func (kp *KeyPair) Write(dir, name string) error {
	keyPEM, err := kp.KeyPEM()
	if err != nil {
		return err
	}
	if err := WriteFile(filepath.Join(dir, name+".crt"), kp.CertPEM()); err != nil {
		return err
	}
	return WriteFile(filepath.Join(dir, name+".key"), keyPEM)
}

// Load reads dir/name.crt and dir/name.key.
func Load(dir, name string) (*KeyPair, error) {
	certs, err := certutil.CertsFromFile(filepath.Join(dir, name+".crt"))
	if err != nil {
		return nil, err
	}
	key, err := keyutil.PrivateKeyFromFile(filepath.Join(dir, name+".key"))
	if err != nil {
		return nil, err
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%s.key: not a signing key", name)
	}
	return &KeyPair{Cert: certs[0], Key: signer}, nil
}

// NewCA makes a self-signed certificate authority.
func NewCA(commonName string) (*KeyPair, error) {
	key, err := newKey()
	if err != nil {
		return nil, err
	}
	// Valid from real time, as the certificates it signs (Issue).
	cert, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: commonName, NotBefore: clusterclock.RealNow().Add(-time.Hour)}, key)
	if err != nil {
		return nil, fmt.Errorf("self-signing CA %q: %w", commonName, err)
	}
	return &KeyPair{Cert: cert, Key: key}, nil
}

// CertSpec says what a certificate is for.
type CertSpec struct {
	CommonName    string
	Organizations []string
	DNSNames      []string
	IPs           []net.IP
	Server        bool // usable to serve TLS
	Client        bool // usable to authenticate as a client
}

// Issue signs a new certificate for spec with the CA.
func (ca *KeyPair) Issue(spec CertSpec) (*KeyPair, error) {
	key, err := newKey()
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	var usages []x509.ExtKeyUsage
	if spec.Server {
		usages = append(usages, x509.ExtKeyUsageServerAuth)
	}
	if spec.Client {
		usages = append(usages, x509.ExtKeyUsageClientAuth)
	}
	// Real time: the process may run on a cluster's clock, ahead of it.
	now := clusterclock.RealNow()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: spec.CommonName, Organization: spec.Organizations},
		DNSNames:     spec.DNSNames,
		IPAddresses:  spec.IPs,
		NotBefore:    now.Add(-time.Hour), // tolerate small clock differences
		NotAfter:     now.Add(validity),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  usages,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		return nil, fmt.Errorf("signing certificate %q: %w", spec.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &KeyPair{Cert: cert, Key: key}, nil
}

// WriteServiceAccountKey writes a new service-account signing key as
// dir/sa.key and its public half as dir/sa.pub.
func WriteServiceAccountKey(dir string) error {
	key, err := newKey()
	if err != nil {
		return err
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return err
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: keyutil.PublicKeyBlockType, Bytes: pubDER})
	if err := WriteFile(filepath.Join(dir, "sa.key"), keyPEM); err != nil {
		return err
	}
	return WriteFile(filepath.Join(dir, "sa.pub"), pubPEM)
}

// WriteFile writes data with mode 0600, whatever the umask.
func WriteFile(path string, data []byte) error {
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return err
	}
	return os.Chmod(path, 0o600)
}

// WriteFileAtomic writes data to path, mode 0600, through a temporary file
// renamed over it: a reader sees the old file or the new one, never half
// of one, whatever stops the write.
func WriteFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := WriteFile(tmp, data); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// newKey makes an ECDSA P-256 key: as strong as RSA-3072 and far quicker
// to generate, which keeps `create cluster` fast.
func newKey() (*ecdsa.PrivateKey, error) {
	return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
}
