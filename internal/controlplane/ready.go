package controlplane

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/credentials"
)

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

// APIServerReady asks the API server's /readyz endpoint, as the admin.
func APIServerReady(ctx context.Context, d clusterdir.Dir, c *v1alpha1.Cluster) error {
	return askAPIServer(ctx, d, c, APIServerReadyPath())
}

// APIServerReadyPath is the API server's readiness without the post-start
// hooks whose objects kubesim writes itself (upstreamBootstrapHooks).
func APIServerReadyPath() string {
	return "/readyz?exclude=" + strings.Join(upstreamBootstrapHooks, "&exclude=")
}

// apiServerServing asks whether the API server serves requests and reaches
// etcd; its post-start hooks (a fifth of a second of its start) may still
// run, and bootstrap writes meanwhile.
func apiServerServing(ctx context.Context, d clusterdir.Dir, c *v1alpha1.Cluster) error {
	return askAPIServer(ctx, d, c, "/readyz/etcd")
}

func askAPIServer(ctx context.Context, d clusterdir.Dir, c *v1alpha1.Cluster, path string) error {
	client, err := credentials.AdminHTTPClient(d)
	if err != nil {
		return err
	}
	return getOK(ctx, client, credentials.APIServerURL(c)+path)
}

// ProbeReadyz asks the API server's /readyz with client (the admin's).
func ProbeReadyz(ctx context.Context, client *http.Client, c *v1alpha1.Cluster) error {
	return getOK(ctx, client, credentials.APIServerURL(c)+"/readyz")
}

func getOK(ctx context.Context, client *http.Client, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}
