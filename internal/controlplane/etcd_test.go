package controlplane

import (
	"testing"

	"go.etcd.io/etcd/server/v3/embed"
)

// embed.NewConfig leaves the slow-request threshold at zero, which makes
// etcd format every request for a warning nobody logs.
func TestEtcdConfigFormatsNoRequestForUnloggedWarnings(t *testing.T) {
	cfg, err := etcdConfig(EtcdOptions{ClientURL: "https://127.0.0.1:2379", PeerURL: "https://127.0.0.1:2380"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.LogLevel != "error" {
		t.Fatalf("etcd logs at %q: the slow-request threshold below assumes its warnings are dropped", cfg.LogLevel)
	}
	if cfg.WarningUnaryRequestDuration < embed.DefaultWarningUnaryRequestDuration {
		t.Errorf("WarningUnaryRequestDuration = %v: every request slower than that is formatted for a dropped warning", cfg.WarningUnaryRequestDuration)
	}
}
