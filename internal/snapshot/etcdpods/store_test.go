package etcdpods

import (
	"context"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// startEtcd serves an etcd of its own on a unix socket, as a cluster's.
func startEtcd(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	socket := filepath.Join(dir, "etcd.sock")
	cfg := embed.NewConfig()
	cfg.Dir = filepath.Join(dir, "data")
	local := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	cfg.ListenClientUrls = []url.URL{local, {Scheme: "unix", Path: socket}}
	cfg.ListenPeerUrls = []url.URL{{Scheme: "http", Host: "127.0.0.1:0"}}
	cfg.AdvertiseClientUrls, cfg.AdvertisePeerUrls = cfg.ListenClientUrls[:1], cfg.ListenPeerUrls
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = "error"
	cfg.TickMs, cfg.ElectionMs = 10, 100
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(time.Minute):
		t.Fatal("etcd not ready after a minute")
	}
	return socket
}

// Create writes what is not there, in transactions of at most BatchOps
// keys or batchBytes, and leaves alone, and reports, what is.
func TestCreateWritesWhatIsNotThere(t *testing.T) {
	s, err := Open(startEtcd(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if _, err := s.Create(ctx, []string{"/registry/pods/default/b"}, [][]byte{[]byte("old")}); err != nil {
		t.Fatal(err)
	}
	var keys []string
	var values [][]byte
	for i := range BatchOps + 30 { // two transactions, "b" in the first
		keys = append(keys, "/registry/pods/default/"+string(rune('a'+i%26))+strings.Repeat("x", i/26))
		values = append(values, []byte("new"))
	}
	keys = append(keys, "/registry/pods/default/big")
	values = append(values, make([]byte, batchBytes-10)) // a transaction of its own
	existing, err := s.Create(ctx, keys, values)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		if want := k == "/registry/pods/default/b"; existing[i] != want {
			t.Errorf("%s: existing %v, want %v", k, existing[i], want)
		}
		resp, err := s.client.Get(ctx, k)
		if err != nil || len(resp.Kvs) != 1 {
			t.Fatalf("%s: %v, %d values", k, err, len(resp.Kvs))
		}
		want := string(values[i])
		if k == "/registry/pods/default/b" {
			want = "old"
		}
		if string(resp.Kvs[0].Value) != want {
			t.Errorf("%s holds %.10q, want %.10q", k, resp.Kvs[0].Value, want)
		}
	}
}
