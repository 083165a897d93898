package controlplane

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterclock"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/component"
	"github.com/kubesim/kubesim/internal/credentials"
)

// Etcd is the cluster's store, etcd's own server embedded: its entry,
// command line and readiness, and its process's main.
const Etcd = "etcd"

// etcdComponent is a single-member etcd.
func etcdComponent() component.Component {
	return component.Component{
		Name: Etcd,
		Main: component.Main(Etcd, func() EtcdOptions { return EtcdOptions{} }, runEtcd),
		Args: component.OwnArgs(etcdOptions), Ready: etcdReady, PortsPrivate: true, Barrier: true,
		Ports:        []string{"", etcdPeerPort},
		MemoryWeight: 10,
		// Upstream's default: etcd's live heap is a few tens of MB and
		// collecting it is cheap (5 % of its CPU at 10,000 pods), so the
		// room GOGC=400 would grow its heap to is memory spent for
		// little CPU saved (measured: 50 MiB less RSS after the
		// side-by-side run, for 1–2 CPU-s more of etcd's).
		GCPercent: "100"}
}

func etcdOptions(d clusterdir.Dir, c *v1alpha1.Cluster) *EtcdOptions {
	return &EtcdOptions{
		DataDir:       d.Etcd(),
		ClientURL:     EtcdURL(c),
		ClientSocket:  EtcdSocket(d),
		PeerURL:       EtcdPeerURL(c),
		CertFile:      credentials.Path(d, credentials.EtcdServer+".crt"),
		KeyFile:       credentials.Path(d, credentials.EtcdServer+".key"),
		TrustedCAFile: credentials.EtcdCAFile(d),
	}
}

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

// EtcdURL is where the cluster's etcd serves clients.
func EtcdURL(c *v1alpha1.Cluster) string {
	return fmt.Sprintf("https://%s:%d", credentials.Loopback, c.Status.Ports.Get(Etcd, ""))
}

// EtcdSocket is the unix socket etcd serves the API server on, in the
// cluster's directory (mode 0700, so only its owner may connect).
func EtcdSocket(d clusterdir.Dir) string { return filepath.Join(d.Path, "etcd.sock") }

// EtcdPeerURL is etcd's (only) peer address.
func EtcdPeerURL(c *v1alpha1.Cluster) string {
	return fmt.Sprintf("https://%s:%d", credentials.Loopback, c.Status.Ports.Get(Etcd, etcdPeerPort))
}

// EtcdClientTLS is the client identity the API server (and snapshots) use.
func EtcdClientTLS(d clusterdir.Dir) transport.TLSInfo {
	return transport.TLSInfo{
		CertFile:      credentials.Path(d, credentials.EtcdClient+".crt"),
		KeyFile:       credentials.Path(d, credentials.EtcdClient+".key"),
		TrustedCAFile: credentials.EtcdCAFile(d),
	}
}

// etcdReady asks etcd's /health endpoint, as the API server's client.
func etcdReady(ctx context.Context, d clusterdir.Dir, c *v1alpha1.Cluster) error {
	tls := EtcdClientTLS(d)
	client, err := credentials.TLSClient(tls.TrustedCAFile, tls.CertFile, tls.KeyFile)
	if err != nil {
		return err
	}
	return getOK(ctx, client, EtcdURL(c)+"/health")
}

// runEtcd runs a single-member etcd that serves TLS clients holding a
// certificate of the cluster's CA on loopback, and the API server on a unix
// socket in the cluster's directory (EtcdOptions).
func runEtcd(ctx context.Context, opts EtcdOptions) error {
	cfg, err := etcdConfig(opts)
	if err != nil {
		return err
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return err
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(time.Minute):
		e.Close()
		return errors.New("not ready after a minute")
	}
	select {
	case <-ctx.Done():
	case err := <-e.Err():
		e.Close()
		return err
	}
	// It skips fsync while it runs (UnsafeNoFsync): a clean stop puts
	// everything it wrote on disk, so only a host crash can lose data.
	e.Close()
	syscall.Sync()
	return nil
}

func etcdConfig(o EtcdOptions) (*embed.Config, error) {
	client, err := url.Parse(o.ClientURL)
	if err != nil {
		return nil, fmt.Errorf("--listen-client-url: %w", err)
	}
	peer, err := url.Parse(o.PeerURL)
	if err != nil {
		return nil, fmt.Errorf("--listen-peer-url: %w", err)
	}
	cfg := embed.NewConfig()
	cfg.Name = "default"
	cfg.Dir = o.DataDir
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*client}, []url.URL{*client}
	if o.ClientSocket != "" {
		// Served without TLS and client certificates (etcd ignores them on
		// unix://); who may connect is decided by the socket's directory.
		cfg.ListenClientUrls = append(cfg.ListenClientUrls, url.URL{Scheme: "unix", Path: o.ClientSocket})
	}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*peer}, []url.URL{*peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	tls := transport.TLSInfo{CertFile: o.CertFile, KeyFile: o.KeyFile, TrustedCAFile: o.TrustedCAFile, ClientCertAuth: true}
	cfg.ClientTLSInfo, cfg.PeerTLSInfo = tls, tls
	// A simulator's data is disposable and snapshots exist for keeping it:
	// skipping fsync removes etcd's main cost. A clean stop still flushes.
	cfg.UnsafeNoFsync = true
	cfg.QuotaBackendBytes = 8 << 30
	// A lone member need not wait out a one-second election timeout before
	// it leads: short ticks make it ready in a fraction of that.
	cfg.TickMs, cfg.ElectionMs = 10, 100
	// On a clock N× real time a tick comes N× as often in real time: a
	// tick of 10 ms × N (at most etcd's default 100 ms) keeps its real
	// cost, and readiness, as at scale 1.
	if c := clusterclock.Own(); c != nil {
		tick := min(10*uint(c.Scale), 100)
		cfg.TickMs, cfg.ElectionMs = tick, 10*tick
	}
	cfg.LogLevel = "error" // its warnings are per-request noise here
	// etcd formats a slow request for its warning before the log level drops
	// the warning, and embed's zero default makes every request slow (the
	// etcd command's default is 300ms): that was 6 % of etcd's CPU.
	cfg.WarningUnaryRequestDuration = time.Minute
	return cfg, nil
}
