//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

// A cluster made before kubesim kept its format — without etcd's own CA,
// the dpdb controller's identity and webhook certificate, the explain
// endpoint's certificate and the ports of both, the API server's webhook
// client certificate, the usage-metrics component's port, identity and
// certificate — starts with this kubesim once brought up to date: its pods
// run, the webhook is registered at its new port, explain answers, and
// kubectl top shows its pods.
func TestClusterOfAnOlderFormatIsUpgradedAtStart(t *testing.T) {
	e := newEnv(t)
	e.createCluster("old", "--nodes", "1")
	e.must("stop", "cluster", "--name", "old")

	dir := e.clusterDir("old")
	config, err := os.ReadFile(filepath.Join(dir, "cluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// As the first kubesims wrote it: no format, ports an object of the
	// API server's and etcd's alone.
	var doc map[string]any
	if err := yaml.Unmarshal(config, &doc); err != nil {
		t.Fatal(err)
	}
	status := doc["status"].(map[string]any)
	delete(status, "formatVersion")
	old := map[string]any{}
	for _, p := range status["ports"].([]any) {
		p := p.(map[string]any)
		switch fmt.Sprint(p["component"], "/", p["name"]) {
		case "kube-apiserver/<nil>":
			old["apiServer"] = p["port"]
		case "etcd/<nil>":
			old["etcd"] = p["port"]
		case "etcd/peer":
			old["etcdPeer"] = p["port"]
		}
	}
	status["ports"] = old
	if config, err = yaml.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "cluster.yaml"), config)
	for _, pattern := range []string{"etcd-ca.*", "dpdb-webhook.*", "scheduler-explain.*", "dpdb-controller.*", "apiserver-webhook-client.*", "usage-metrics*", "front-proxy-*"} {
		matches, _ := filepath.Glob(filepath.Join(dir, "pki", pattern))
		for _, m := range matches {
			if err := os.Remove(m); err != nil {
				t.Fatal(err)
			}
		}
	}

	e.must("start", "cluster", "--name", "old")
	config, _ = os.ReadFile(filepath.Join(dir, "cluster.yaml"))
	var after struct {
		Status v1alpha1.ClusterStatus `json:"status"`
	}
	if err := yaml.Unmarshal(config, &after); err != nil {
		t.Fatal(err)
	}
	ports := after.Status.Ports
	webhookPort := strconv.Itoa(ports.Get("dpdb-controller", ""))
	if after.Status.FormatVersion != 4 || ports.Get("dpdb-controller", "") == 0 || ports.Get("usage-metrics", "") == 0 ||
		ports.Get("kube-scheduler", "explain") == 0 || fmt.Sprint(ports.APIServer()) != fmt.Sprint(old["apiServer"]) {
		t.Fatalf("cluster.yaml after the start:\n%s", config)
	}
	client := e.client()
	createPod(t, client, testPod("after-upgrade"))
	waitPhase(t, client, "after-upgrade", "Running")
	hooks, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().List(context.Background(), metav1.ListOptions{})
	if err != nil || len(hooks.Items) == 0 || len(hooks.Items[0].Webhooks) == 0 {
		t.Fatalf("webhook configurations: %v", err)
	}
	if url := *hooks.Items[0].Webhooks[0].ClientConfig.URL; !regexp.MustCompile(`:` + webhookPort + `/`).MatchString(url) {
		t.Errorf("the dpdb webhook is registered at %s, not at the new port %s", url, webhookPort)
	}
	e.must("explain", "--name", "old", "pod", "after-upgrade")
	eventually(t, 60*time.Second, "kubectl top to show the pod", func() error {
		r := e.run("kubectl", "--name", "old", "top", "pod", "after-upgrade", "--no-headers")
		if r.code != 0 || !strings.HasPrefix(r.stdout, "after-upgrade ") {
			return fmt.Errorf("%s", r)
		}
		return nil
	})
}
