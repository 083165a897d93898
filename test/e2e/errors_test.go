//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadInput checks that every mistake a user is likely to make gets one
// clear line and a non-zero exit, and creates nothing.
func TestBadInput(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	config := func(name, body string) string {
		p := filepath.Join(dir, name)
		writeFile(t, p, []byte(body))
		return p
	}

	e.fails(`invalid cluster name "Blue_1": must be a DNS label`, "create", "cluster", "--name", "Blue_1")
	e.fails(`cluster "nope" does not exist`, "start", "cluster", "--name", "nope")
	e.fails(`cluster "nope" does not exist`, "stop", "cluster", "--name", "nope")
	e.fails(`cluster "nope" does not exist`, "delete", "cluster", "--name", "nope")
	e.fails(`cluster "nope" does not exist`, "kubectl", "--name", "nope", "get", "ns")
	e.fails(`cluster "nope" does not exist`, "get", "kubeconfig", "--name", "nope")
	e.fails(`cluster "nope" does not exist`, "snapshot", "save", "--name", "nope", "--path", filepath.Join(dir, "s.db"))
	e.fails(`cluster "nope" does not exist`, "logs", "--name", "nope", "etcd")
	e.fails(`unknown field "nodez"`, "create", "cluster", "--config",
		config("unknown.yaml", "apiVersion: kubesim.io/v1alpha1\nkind: Cluster\nnodez: 3\n"))
	e.fails(`unknown field "networking.podSubnett"`, "create", "cluster", "--config",
		config("nested.yaml", "apiVersion: kubesim.io/v1alpha1\nkind: Cluster\nnetworking:\n  podSubnett: 10.0.0.0/10\n"))
	e.fails(`apiVersion: got "kind.x-k8s.io/v1alpha4", want kubesim.io/v1alpha1`, "create", "cluster", "--config",
		config("kind.yaml", "apiVersion: kind.x-k8s.io/v1alpha4\nkind: Cluster\n"))
	e.fails(`nodes: must be an integer, got "three"`, "create", "cluster", "--config",
		config("three.yaml", "apiVersion: kubesim.io/v1alpha1\nkind: Cluster\nnodes: three\n"))
	e.fails(`invalid cluster name "": must be a DNS label`, "create", "cluster", "--name", "")
	e.fails(`invalid cluster name "": must be a DNS label`, "kubectl", "--name", "", "get", "ns")
	e.fails("networking.serviceSubnet: 10.0.0.0/24 overlaps networking.podSubnet", "create", "cluster",
		"--service-subnet", "10.0.0.0/24")
	e.fails("networking.apiServerPort: 70000 is not a port number", "create", "cluster", "--api-server-port", "70000")
	e.fails("nodeLifecycle.nodeMonitorGracePeriod", "create", "cluster",
		"--node-monitor-period", "10s", "--node-monitor-grace-period", "5s")
	e.fails("auditPolicy", "create", "cluster", "--audit-policy", config("audit.yaml", "kind: Nonsense\n"))
	e.fails(`stageFiles[0]: `+filepath.Join(dir, "stage.yaml")+`, document 1: not a Stage (kind: Node)`, "create", "cluster", "--config",
		config("stages.yaml", "apiVersion: kubesim.io/v1alpha1\nkind: Cluster\nstageFiles: ["+config("stage.yaml", "apiVersion: v1\nkind: Node\n")+"]\n"))
	e.fails("--config", "create", "cluster", "--config", filepath.Join(dir, "missing.yaml"))
	e.fails("--owner-pid: no running process 1073741824", "create", "cluster", "--owner-pid", "1073741824")

	e.fails("--replicas: must be between 0 and", "scale", "node", "--replicas", "-1")
	e.fails("--replicas: required", "scale", "node")
	e.fails(`cluster "nope" does not exist`, "scale", "node", "--name", "nope", "--replicas", "3")
	e.fails("--template "+filepath.Join(dir, "badnode.yaml")+`:4: unknown field "spec.podCIDRR"`, "scale", "node", "--replicas", "3", "--template",
		config("badnode.yaml", "apiVersion: v1\nkind: Node\nspec:\n  podCIDRR: x\n"))
	e.fails(`unknown field "spec.podCIDRR"`, "create", "cluster", "--nodes", "2", "--node-template",
		config("badnode2.yaml", "apiVersion: v1\nkind: Node\nspec:\n  podCIDRR: x\n"))
	e.fails("not a Node (kind: Pod)", "scale", "node", "--replicas", "3", "--template",
		config("pod.yaml", "apiVersion: v1\nkind: Pod\nspec:\n  containers: []\n"))
	e.fails("holds 2 documents (separated by ---); want one Node", "create", "cluster", "--nodes", "2", "--node-template",
		config("two.yaml", "apiVersion: v1\nkind: Node\n---\napiVersion: v1\nkind: Node\n"))
	e.fails("nodes (--nodes): must be between 0 and 1000000, got -2", "create", "cluster", "--nodes", "-2")
	e.fails("nodes (--nodes): must be between 0 and 1000000, got 1000001", "create", "cluster", "--nodes", "1000001")
	e.fails("nodes (--nodes): must be between 0 and 1000000, got 2000000000", "create", "cluster", "--config",
		config("many.yaml", "apiVersion: kubesim.io/v1alpha1\nkind: Cluster\nnodes: 2000000000\n"))

	// An unwritable kubeconfig is found before anything is made.
	blocker := config("file", "a file, so nothing can be created beneath it")
	r := e.runEnv([]string{"KUBECONFIG=" + filepath.Join(blocker, "config")}, "create", "cluster")
	if r.code == 0 || !strings.Contains(r.stderr, "cannot be written") {
		t.Errorf("create with an unwritable kubeconfig: %s", r)
	}
	if entries, _ := os.ReadDir(filepath.Join(e.home, "clusters")); len(entries) != 0 {
		t.Errorf("failed creates left clusters behind: %v", entries)
	}
	if pids := e.processes(); len(pids) != 0 {
		t.Errorf("failed creates left processes: %v", pids)
	}
}
