//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// TestCommandsActOnTheCurrentContextsCluster: with two clusters, scale node
// without --name acts on the one create made current, --name wins, and a
// current context of another cluster means "kubesim"; without --name each
// says which on its first line. A scale down says what it displaced, a typo'd command
// fails, and the components' logs hold none of the noise they are known
// to make at start.
func TestCommandsActOnTheCurrentContextsCluster(t *testing.T) {
	e := newEnv(t)
	e.createCluster("a", "--nodes", "1")
	e.createCluster("b", "--nodes", "1") // kubesim-b is current now
	ctx := context.Background()
	clientOf := func(name string) kubernetes.Interface {
		return clientsetFor(t, mustConfig(t, filepath.Join(e.clusterDir(name), "kubeconfig")))
	}
	nodeCount := func(name string) int {
		t.Helper()
		list, err := clientOf(name).CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return len(list.Items)
	}
	firstLine := func(r result) string { line, _, _ := strings.Cut(r.stderr, "\n"); return line }

	r := e.must("scale", "node", "--replicas", "2")
	if got, want := firstLine(r), `Cluster "b" (current context kubesim-b)`; got != want {
		t.Errorf("scale node without --name began %q, want %q", got, want)
	}
	if a, b := nodeCount("a"), nodeCount("b"); a != 1 || b != 2 {
		t.Errorf("after scale node --replicas 2 without --name: a has %d nodes, b %d; want 1 and 2", a, b)
	}
	r = e.must("scale", "node", "--name", "a", "--replicas", "3")
	if strings.HasPrefix(r.stderr, "Cluster ") {
		t.Errorf("scale node --name a began %q; with --name the user said which", firstLine(r))
	}
	if a, b := nodeCount("a"), nodeCount("b"); a != 3 || b != 2 {
		t.Errorf("after scale node --name a --replicas 3: a has %d nodes, b %d; want 3 and 2", a, b)
	}

	// A pod on the node a scale down deletes is counted as displaced.
	pod := testPod("on-the-last-node")
	pod.Spec.NodeName = "node-000001"
	if _, err := clientOf("b").CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPhase(t, clientOf("b"), pod.Name, corev1.PodRunning)
	r = e.must("scale", "node", "--replicas", "1")
	if want := "deleted 1 node (node-000001), leaving 1; 1 pod was bound to them: displaced"; !strings.Contains(r.stderr, want) {
		t.Errorf("scale down of b said %q, want %q", r.stderr, want)
	}

	// A current context of another cluster: the default cluster, which
	// does not exist here; neither a nor b is touched.
	cfg, err := clientcmd.LoadFromFile(e.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Clusters["prod"] = &clientcmdapi.Cluster{Server: "https://prod.example:6443"}
	cfg.AuthInfos["prod"] = &clientcmdapi.AuthInfo{Token: "t"}
	cfg.Contexts["prod"] = &clientcmdapi.Context{Cluster: "prod", AuthInfo: "prod"}
	cfg.CurrentContext = "prod"
	if err := clientcmd.WriteToFile(*cfg, e.kubeconfig); err != nil {
		t.Fatal(err)
	}
	r = e.run("scale", "node", "--replicas", "5")
	if r.code == 0 || firstLine(r) != `Cluster "kubesim" (default; current context "prod" is not a kubesim cluster's)` ||
		!strings.Contains(r.stderr, `there is no cluster "kubesim" to default to; clusters: a, b`) {
		t.Errorf("scale node with a current context of another cluster: %s", r)
	}
	if a, b := nodeCount("a"), nodeCount("b"); a != 3 || b != 1 {
		t.Errorf("a scale of the default cluster changed a (%d nodes) or b (%d)", a, b)
	}

	// A typo fails, with a suggestion, rather than print help and exit 0.
	if r := e.run("get", "clusterz"); r.code == 0 || !strings.Contains(r.stderr, `unknown command "clusterz" for "kubesim get"`) || !strings.Contains(r.stderr, "Did you mean this?\n\tclusters") {
		t.Errorf("kubesim get clusterz: %s", r)
	}

	// The logs hold no line the components are known to write harmlessly
	// at start, and everything else.
	for component, noise := range map[string]*regexp.Regexp{
		"kube-apiserver":          regexp.MustCompile(`createTransport failed to connect .*(use of closed network connection|operation was canceled)`),
		"kube-controller-manager": regexp.MustCompile(`Can't get CPU or zone information`),
	} {
		data, err := os.ReadFile(filepath.Join(e.clusterDir("a"), "logs", component+".log"))
		if err != nil {
			t.Fatal(err)
		}
		if noise.Match(data) || !regexp.MustCompile(`(?m)^I\d{4} `).Match(data) {
			t.Errorf("%s's log (%d bytes) holds %q, or no info lines at all", component, len(data), noise)
		}
	}
}
