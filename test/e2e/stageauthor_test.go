//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// mallory may create and read Stages and do anything with ConfigMaps:
// nothing else. Through a Stage she once bound herself to the simulator's
// roles, wrote as the controller-manager, and copied Secrets into
// ConfigMaps (issue 47).
const malloryRole = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: stage-writer}
rules:
- {apiGroups: [kwok.x-k8s.io], resources: [stages], verbs: [create, get, list, patch]}
- {apiGroups: [""], resources: [configmaps, configmaps/status], verbs: ["*"]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: mallory-stage-writer}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: stage-writer}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: mallory}]
`

// configMapStage is a Stage for ConfigMaps labelled name=true, with one
// apply step of template, made as user (if any).
func configMapStage(name, kind, template, user string) string {
	as := ""
	if user != "" {
		as = "\n      impersonation: {username: " + user + "}"
	}
	return fmt.Sprintf(`apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: %[1]s}
spec:
  resourceRef: {apiGroup: v1, kind: %[2]s}
  selector:
    matchLabels: {%[1]s: "true"}
  steps:
  - apply:
      template: |
%[3]s%[4]s
`, name, kind, indent(template, "        "), as)
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return prefix + strings.Join(lines, "\n"+prefix)
}

// applyAs applies manifest as user (impersonated by the admin), returning
// what kubectl said.
func (e *env) applyAs(user, manifest string) result {
	e.t.Helper()
	f := filepath.Join(e.t.TempDir(), "manifest.yaml")
	writeFile(e.t, f, []byte(manifest))
	return e.run("kubectl", "--name", e.cluster, "--as", user, "apply", "-f", f)
}

// A Stage acts with no more rights than its author holds: each of the
// three attacks is refused, naming the right mallory lacks, and grants
// nothing; an admin's same Stage is admitted and works.
func TestStageAuthors(t *testing.T) {
	e := newEnv(t)
	e.createCluster("authors")
	e.apply(malloryRole)
	client := e.client()
	ctx := context.Background()

	bindMallory := "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: mallory-is-simulator}\n" +
		"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: kubesim:kubelet-sim}\n" +
		"subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: mallory}]\n"
	copySecret := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: 'leak-{{ .metadata.name }}', namespace: default}\ndata: {token: '{{ index .data \"token\" }}'}\n"
	attacks := []struct{ name, manifest, want string }{
		{"bind", configMapStage("bind", "ConfigMap", bindMallory, ""),
			`Stage "bind": mallory may not create clusterrolebindings.rbac.authorization.k8s.io cluster-wide, and its apply steps write it`},
		{"as-kcm", configMapStage("as-kcm", "ConfigMap", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: kube-system}\n", "system:kube-controller-manager"),
			`Stage "as-kcm": mallory may not impersonate users system:kube-controller-manager, and its writes are made as system:kube-controller-manager`},
		{"leak", configMapStage("leak", "Secret", copySecret, ""),
			`Stage "leak": mallory may not get secrets cluster-wide, and it acts on secrets`},
	}
	for _, a := range attacks {
		r := e.applyAs("mallory", a.manifest)
		if r.code == 0 || !strings.Contains(r.stderr, a.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("mallory's Stage %s: %s\nwant one line saying %q", a.name, r, a.want)
		}
		if _, err := client.RESTClient().Get().AbsPath("/apis/kwok.x-k8s.io/v1alpha1/stages", a.name).DoRaw(ctx); !apierrors.IsNotFound(err) {
			t.Errorf("Stage %s exists after it was refused: %v", a.name, err)
		}
	}
	canI := func(as, verb string, resource ...string) string {
		args := append([]string{"kubectl", "--name", e.cluster, "auth", "can-i", verb}, resource...)
		return strings.TrimSpace(e.run(append(args, "--as", as)...).stdout)
	}
	for _, check := range [][]string{{"mallory", "delete", "pods", "-A"}, {"mallory", "create", "clusterrolebindings"},
		{"kubesim:kubelet-sim", "create", "clusterrolebindings"}, {"kubesim:kubelet-sim", "get", "secrets", "-A"}} {
		if got := canI(check[0], check[1], check[2:]...); got != "no" {
			t.Errorf("after the refused Stages, may %s %s %s: %q", check[0], check[1], strings.Join(check[2:], " "), got)
		}
	}

	// A change is checked too: mallory may not turn a harmless Stage of
	// hers into one of them.
	harmless := configMapStage("bind", "ConfigMap", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: copy, namespace: default}\n", "")
	if r := e.applyAs("mallory", harmless); r.code != 0 {
		t.Fatalf("mallory's harmless Stage: %s", r)
	}
	if r := e.applyAs("mallory", attacks[0].manifest); r.code == 0 || !strings.Contains(r.stderr, attacks[0].want) {
		t.Errorf("mallory's change of her Stage into an attack: %s", r)
	}

	// The admin's same Stage is admitted, the simulator granted, and it writes.
	e.apply(attacks[0].manifest)
	e.kubectl("create", "configmap", "trigger")
	e.kubectl("label", "configmap", "trigger", "bind=true")
	eventually(t, time.Minute, "the admin's Stage binding mallory", func() error {
		_, err := client.RbacV1().ClusterRoleBindings().Get(ctx, "mallory-is-simulator", metav1.GetOptions{})
		return err
	})
}

// deploy/stage-author-policy.yaml, for clusters where the simulator runs
// in-cluster with a fixed role, holds the same rule in the API server
// itself: tried here on a kubesim cluster with its own check taken away.
func TestStageAuthorPolicyForOtherClusters(t *testing.T) {
	e := newEnv(t)
	e.createCluster("policy")
	e.apply(malloryRole)
	e.kubectl("delete", "validatingwebhookconfiguration", "kubesim-stage-authors")
	policy, err := os.ReadFile("../../deploy/stage-author-policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e.apply(string(policy))
	deletePods := `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: delete-every-pod}
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  steps: [{delete: true}]
`
	want := "Stage delete-every-pod: mallory may not get pods cluster-wide, and it acts on Pod"
	// A new policy is enforced once the API server has compiled it.
	eventually(t, time.Minute, "the policy refusing mallory's Stage", func() error {
		r := e.applyAs("mallory", deletePods)
		if r.code == 0 {
			e.kubectl("delete", "stage", "delete-every-pod")
			return errors.New("admitted")
		}
		if !strings.Contains(r.stderr, want) {
			return fmt.Errorf("%s", r)
		}
		return nil
	})
	// With the rights on pods, she may spend them; writing other objects
	// through the simulator needs more than a policy can read: an admin.
	e.apply(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: pod-admin}
rules: [{apiGroups: [""], resources: [pods], verbs: ["*"]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: mallory-pod-admin}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: pod-admin}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: mallory}]
`)
	if r := e.applyAs("mallory", strings.Replace(deletePods, "delete-every-pod", "hers", 1)); r.code != 0 {
		t.Errorf("mallory's Stage for pods, once she may delete them: %s", r)
	}
	writes := configMapStage("writes", "Pod", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: copy, namespace: default}\n", "")
	if r := e.applyAs("mallory", writes); r.code == 0 || !strings.Contains(r.stderr, "only a cluster admin may") {
		t.Errorf("mallory's Stage with an apply step: %s", r)
	}
	e.apply(deletePods) // an admin's
	e.apply(writes)
}

// The Stages of a cluster's stageFiles are made by bootstrap at every
// start, before the author check is served again: they are the admin's,
// and the check never stands in their way (a start would otherwise wait
// on it for ever).
func TestStageFilesAcrossAStart(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	stage := filepath.Join(dir, "stage.yaml")
	writeFile(t, stage, []byte(configMapStage("from-file", "ConfigMap", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: copy, namespace: default}\n", "")))
	cfg := filepath.Join(dir, "cluster.yaml")
	writeFile(t, cfg, []byte("apiVersion: kubesim.io/v1alpha1\nkind: Cluster\nstageFiles: ["+stage+"]\n"))
	e.createCluster("files", "--config", cfg)
	e.kubectl("get", "stage", "from-file")
	e.kubectl("delete", "stage", "from-file")
	e.must("stop", "cluster", "--name", "files")
	e.must("start", "cluster", "--name", "files")
	e.kubectl("get", "stage", "from-file") // made again at the start
	// And the check is served again, at its new port.
	e.apply(malloryRole)
	hers := configMapStage("hers", "Secret", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: default}\n", "")
	if r := e.applyAs("mallory", hers); r.code == 0 || !strings.Contains(r.stderr, "mallory may not get secrets") {
		t.Errorf("after the start, mallory's Stage on Secrets: %s", r)
	}
}
