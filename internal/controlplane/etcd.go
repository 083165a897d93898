package controlplane

import (
	"github.com/spf13/pflag"
)

// EtcdOptions is the command line of the etcd component: a single member
// serving only TLS clients that hold a certificate of the cluster's CA.
type EtcdOptions struct {
	DataDir   string
	ClientURL string
	// ClientSocket, if set, is a unix socket etcd also serves clients on,
	// without TLS: the API server's way in (see EtcdSocket).
	ClientSocket  string
	PeerURL       string
	CertFile      string
	KeyFile       string
	TrustedCAFile string
}

func (o *EtcdOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.DataDir, "data-dir", o.DataDir, "etcd data directory")
	fs.StringVar(&o.ClientURL, "listen-client-url", o.ClientURL, "https URL clients connect to")
	fs.StringVar(&o.ClientSocket, "listen-client-socket", o.ClientSocket, "unix socket to serve clients on without TLS (its directory's permissions guard it)")
	fs.StringVar(&o.PeerURL, "listen-peer-url", o.PeerURL, "https URL of the (single) peer endpoint")
	fs.StringVar(&o.CertFile, "cert-file", o.CertFile, "serving certificate")
	fs.StringVar(&o.KeyFile, "key-file", o.KeyFile, "serving key")
	fs.StringVar(&o.TrustedCAFile, "trusted-ca-file", o.TrustedCAFile, "CA that signs client certificates")
}
