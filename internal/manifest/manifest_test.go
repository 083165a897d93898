package manifest

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

func decodeCluster(body string) error {
	return Decode([]byte("apiVersion: kubesim.io/v1alpha1\nkind: Cluster\n"+body), &v1alpha1.Cluster{}, v1alpha1.GroupVersion, v1alpha1.ClusterKind)
}

func decodeNode(text string) error {
	return Decode([]byte(text), &corev1.Node{}, "v1", "Node")
}

// A value of the wrong type is named by its field and said in the user's
// words, not Go's ("cannot unmarshal string into Go struct field ...").
func TestWrongTypesAreSaidInTheUsersWords(t *testing.T) {
	for body, want := range map[string]string{
		"nodes: three":                       `nodes: must be an integer, got "three"`,
		"nodes: 1.5":                         `nodes: must be an integer, got 1.5`,
		"nodes: [1]":                         `nodes: must be an integer, got a list`,
		"name: 3":                            `name: must be a string, got 3`,
		"disableKubeletSim: yes please":      `disableKubeletSim: must be true or false, got "yes please"`,
		"networking: 3":                      `networking: must be a mapping, got 3`,
		"networking: {apiServerPort: x}":     `networking.apiServerPort: must be an integer, got "x"`,
		"descheduler: {profiles: [1]}":       `descheduler.profiles[0]: must be a string, got 1`,
		"extraArgs: {kube-apiserver: --v=2}": `extraArgs.kube-apiserver: must be a list, got "--v=2"`,
		"scheduler: {percentageOfNodesToScore: 3000000000}": `scheduler.percentageOfNodesToScore: must be an integer between -2147483648 and 2147483647, got 3000000000`,
	} {
		if err := decodeCluster(body); err == nil || err.Error() != want {
			t.Errorf("%q: got %v, want %q", body, err, want)
		}
	}
	for text, want := range map[string]string{
		"apiVersion: v1\nkind: Node\nmetadata: {labels: {zone: 1}}":         `metadata.labels.zone: must be a string, got 1`,
		"apiVersion: v1\nkind: Node\nspec: {taints: [{key: a, effect: 3}]}": `spec.taints[0].effect: must be a string, got 3`,
		"apiVersion: v1\nkind: Node\nspec: {unschedulable: maybe}":          `spec.unschedulable: must be true or false, got "maybe"`,
	} {
		if err := decodeNode(text); err == nil || err.Error() != want {
			t.Errorf("%q: got %v, want %q", text, err, want)
		}
	}
}

func TestOnlyOneManifestOfTheRightKind(t *testing.T) {
	for text, want := range map[string]string{
		"apiVersion: v1\nkind: Pod\nspec: {containers: []}\n": "not a Node (kind: Pod)",
		"apiVersion: v1\nmetadata: {name: a}\n":               "not a Node (no kind)",
		"apiVersion: v2\nkind: Node\n":                        `apiVersion: got "v2", want v1`,
		"- apiVersion: v1\n  kind: Node\n":                    "not a Node: want a mapping with apiVersion: v1 and kind: Node",
		"":                                                    "not a Node: want a mapping with apiVersion: v1 and kind: Node",
		"apiVersion: v1\nkind: Node\n---\napiVersion: v1\nkind: Node\n":        "holds 2 documents (separated by ---); want one Node",
		"# big\napiVersion: v1\nkind: Node\n--- # two\nkind: Node\n---\n---\n": "holds 2 documents (separated by ---); want one Node",
	} {
		if err := decodeNode(text); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want an error containing %q", text, err, want)
		}
	}
	for _, text := range []string{
		"apiVersion: v1\nkind: Node\n",
		"---\napiVersion: v1\nkind: Node\n---\n# nothing more\n",
	} {
		if err := decodeNode(text); err != nil {
			t.Errorf("%q: %v", text, err)
		}
	}
}

// A value a type of its own refuses (a duration, a quantity) is named by
// its field, not only by its type's error ("time: invalid duration").
func TestRefusedValuesNameTheirField(t *testing.T) {
	for body, want := range map[string]string{
		"nodeLifecycle: {nodeMonitorGracePeriod: ten}":    `nodeLifecycle.nodeMonitorGracePeriod: "ten" is not a duration; write one such as 30s, 5m or 1h30m`,
		"descheduler: {interval: 5}":                      `descheduler.interval: 5 is not a duration; write one such as 30s, 5m or 1h30m`,
		"memoryLimit: lots":                               `memoryLimit: "lots" is not a quantity; write one such as 4, 500m or 32Gi`,
		"nodeGroups: [{name: a, capacity: {cpu: eight}}]": `nodeGroups[0].capacity.cpu: "eight" is not a quantity; write one such as 4, 500m or 32Gi`,
	} {
		if err := decodeCluster(body); err == nil || err.Error() != want {
			t.Errorf("%q: got %v, want %q", body, err, want)
		}
	}
}

// Every error about a field has the line of that field in the file (after
// the comments and --- before the document), and its list indices: the
// one way kubesim says where a fault is, file:line: path: message.
func TestErrorsHaveTheLineOfTheirField(t *testing.T) {
	const head = "# a cluster\n---\napiVersion: kubesim.io/v1alpha1\nkind: Cluster\n" // lines 1-4
	for body, want := range map[string]string{
		"nodeGroups:\n- name: a\n  count: 1\n- name: b\n  count: two\n":            `c.yaml:9: nodeGroups[1].count: must be an integer, got "two"`,
		"nodeGroups:\n- name: a\n  countt: 1\n":                                    `c.yaml:7: unknown field "nodeGroups[0].countt"`,
		"networking:\n  podSubnet: 10.0.0.0/8\n  apiServerPort: x\n":               `c.yaml:7: networking.apiServerPort: must be an integer, got "x"`,
		"nodeGroups:\n- name: a\n  labels:\n    topology.kubernetes.io/zone: 1\n":  `c.yaml:8: nodeGroups[0].labels.topology.kubernetes.io/zone: must be a string, got 1`,
		"nodeLifecycle:\n  nodeMonitorPeriod: 1s\n  nodeMonitorGracePeriod: ten\n": `c.yaml:7: nodeLifecycle.nodeMonitorGracePeriod: "ten" is not a duration; write one such as 30s, 5m or 1h30m`,
		"name: a\nname: b\n":                   `c.yaml:6: not valid YAML: key "name" already set in map`,
		"name: a\nnodes: [1, 2\nstages: x\n":   `c.yaml:6: not valid YAML: did not find expected ',' or ']'`,
		"name: a\nnodes: 3: 4\n":               `c.yaml:6: not valid YAML: mapping values are not allowed in this context`,
		"name: a\nstages: \"open\nnodes: 3\n":  `c.yaml:6: not valid YAML: found unexpected end of stream`,
		"name: a\nnodeGroups:\n  - x\n y: 2\n": `c.yaml:8: not valid YAML: did not find expected key`,
	} {
		err := Decode([]byte(head+body), &v1alpha1.Cluster{}, v1alpha1.GroupVersion, v1alpha1.ClusterKind)
		if err == nil || InFile("c.yaml", err).Error() != want {
			t.Errorf("%q: got %v, want %q", body, InFile("c.yaml", err), want)
		}
	}
	err := decodeNode("apiVersion: v1\nkind: Pod\n")
	if got, want := InFile("n.yaml", err).Error(), "n.yaml:2: not a Node (kind: Pod)"; got != want {
		t.Errorf("a Pod for a Node: %q, want %q", got, want)
	}
	// An error without a line says the file alone.
	if got := InFile("n.yaml", errors.New("unreadable")).Error(); got != "n.yaml: unreadable" {
		t.Errorf("no line: %q", got)
	}
}
