package credentials

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"

	"github.com/kubesim/kubesim/internal/clusterdir"
)

// TLSClient is an HTTPS client that trusts caFile and presents certFile.
func TLSClient(caFile, certFile, keyFile string) (*http.Client, error) {
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("%s holds no certificate", caFile)
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		DisableKeepAlives: true,
	}}, nil
}

// AdminHTTPClient is an HTTPS client of the API server as the admin.
func AdminHTTPClient(d clusterdir.Dir) (*http.Client, error) {
	return TLSClient(CAFile(d), Path(d, Admin+".crt"), Path(d, Admin+".key"))
}
