package components

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"syscall"
	"time"

	"github.com/kubesim/kubesim/internal/clusterclock"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/kubesim/kubesim/internal/component"
	"github.com/kubesim/kubesim/internal/controlplane"
)

// runEtcd runs a single-member etcd that serves TLS clients holding a
// certificate of the cluster's CA on loopback, and the API server on a unix
// socket in the cluster's directory (controlplane.EtcdOptions).
func runEtcd(args []string) int {
	var opts controlplane.EtcdOptions
	return component.RunOwn(controlplane.Etcd, &opts, args, func(ctx context.Context) error {
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
	})
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
