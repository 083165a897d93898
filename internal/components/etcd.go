package components

import (
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/kubesim/kubesim/internal/controlplane"
)

// runEtcd runs a single-member etcd that serves only TLS clients holding a
// certificate of the cluster's CA (controlplane.EtcdOptions).
func runEtcd(args []string) int {
	var opts controlplane.EtcdOptions
	if !parseArgs(controlplane.Etcd, &opts, args) {
		return 2
	}
	cfg, err := etcdConfig(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "etcd:", err)
		return 2
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "etcd:", err)
		return 1
	}
	defer e.Close()
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(time.Minute):
		fmt.Fprintln(os.Stderr, "etcd: not ready after a minute")
		return 1
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	select {
	case <-stop:
		return 0
	case err := <-e.Err():
		fmt.Fprintln(os.Stderr, "etcd:", err)
		return 1
	}
}

func etcdConfig(o controlplane.EtcdOptions) (*embed.Config, error) {
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
	cfg.LogLevel = "error" // its warnings are per-request noise here
	return cfg, nil
}
