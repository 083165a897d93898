package scenario

import (
	"strings"
	"testing"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/manifest"
)

// A value an enum-valued field does not take is refused as the file is
// read, with its line, its field and the values it takes, rather than
// matching nothing until a step times out (phase: Runing).
func TestEnumsAreCheckedAtLoad(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{head + "steps:\n- sleep: 1s\n- wait:\n    pods: {selector: app=web, count: 2,\n      phase: Runing}\n",
			`:7: steps[1].wait.pods.phase: "Runing" is not one of Pending, Running, Succeeded, Failed, Unknown`},
		{head + "steps:\n- assert:\n  - pods: {count: 1}\n  - pods: {count: 1, phase: running}\n",
			`:6: steps[0].assert[1].pods.phase: "running" is not one of Pending, Running, Succeeded, Failed, Unknown`},
		{head + "steps:\n- evict: {pod: a, expect: refuse}\n", `:4: steps[0].evict.expect: "refuse" is not one of allowed, refused`},
		{head + "steps:\n- drain: {node: a, expect: block}\n", `:4: steps[0].drain.expect: "block" is not one of completes, blocked`},
		{head + "steps:\n- scale: {kind: DaemonSet, name: a, replicas: 1}\n", `:4: steps[0].scale.kind: "DaemonSet" is not one of Deployment, ReplicaSet, StatefulSet`},
		{head + "steps:\n- wait: {rolledOut: {kind: StatefulSet, name: a}}\n", `:4: steps[0].wait.rolledOut.kind: "StatefulSet" is not one of Deployment`},
		{head + "steps:\n- taint:\n    nodes: a\n    taints:\n    - {key: k, effect: NoScheduel}\n", `:7: steps[0].taint.taints[0].effect: "NoScheduel" is not one of NoSchedule, PreferNoSchedule, NoExecute`},
		{head + "steps:\n- foreach:\n    var: p\n    values: [Running, b]\n    steps:\n    - wait: {pods: {phase: \"${p}\"}}\n", `:8: steps[0].foreach.steps[1].wait.pods.phase: "b" is not one of`},
		{head + "parameters: {phase: Done}\nsteps:\n- assert: [{pods: {phase: \"${phase}\", count: 1}}]\n", `:5: steps[0].assert[0].pods.phase: "Done" is not one of`},
		{head + "cluster:\n  nodeGroups:\n  - count: 1\n    taints: [{key: k, effect: Never}]\nsteps:\n- sleep: 1s\n", `:6: cluster.nodeGroups[0].taints[0].effect: "Never" is not one of NoSchedule, PreferNoSchedule, NoExecute`},
		{head + "clusters:\n- name: a\n- name: b\n  stages: quick\nsteps:\n- sleep: 1s\n", `:6: clusters[1].stages: "quick" is not one of ` + strings.Join(v1alpha1.StageSets, ", ")},
	} {
		_, err := load(t, tc.text, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant %s", tc.text, err, tc.want)
		}
	}
	// The values each field takes load; so does a field left out.
	for _, text := range []string{
		head + "steps:\n- wait: {pods: {phase: Running, count: 1}}\n- evict: {pod: a, expect: refused}\n- drain: {node: a, expect: blocked}\n",
		head + "steps:\n- scale: {kind: StatefulSet, name: a, replicas: 1}\n- wait: {rolledOut: {name: a}}\n",
		head + "steps:\n- taint: {nodes: a, taints: [{key: k, effect: NoExecute}]}\n",
	} {
		if _, err := load(t, text, nil); err != nil {
			t.Errorf("%q: %v", text, err)
		}
	}
}

// The same broken YAML is said at the same line whether kubesim reads it
// as a scenario or as a Cluster file: one parser, one count.
func TestSyntaxErrorsHaveOneLine(t *testing.T) {
	for _, body := range []string{
		"name: a\ndescription: b: c\n",      // a scanner's error
		"name: a\ndescription: [b, c\n",     // a parser's, counted from 0 by yaml.v3
		"name: a\n  description: b\nx: 1\n", // indentation
		"name: a\ndescription: \"b\nx: 1\n", // a string that does not end
	} {
		_, runErr := load(t, head+body+"steps:\n- sleep: 1s\n", nil)
		configErr := manifest.Decode([]byte("apiVersion: kubesim.io/v1alpha1\nkind: Cluster\n"+body), &v1alpha1.Cluster{}, v1alpha1.GroupVersion, v1alpha1.ClusterKind)
		if runErr == nil || configErr == nil {
			t.Fatalf("%q: run %v, config %v; want both to fail", body, runErr, configErr)
		}
		line := func(err error) string { // the :N: after the file's name
			_, rest, _ := strings.Cut(err.Error(), ".yaml:")
			n, _, _ := strings.Cut(rest, ":")
			return n
		}
		if got, want := line(runErr), line(manifest.InFile("c.yaml", configErr)); got != want || got != "4" {
			t.Errorf("%q: run says line %s (%v), a Cluster file line %s (%v); want 4 both", body, got, runErr, want, configErr)
		}
	}
}
