package kwokcel

import (
	"fmt"
	"reflect"
	"testing"
	"time"
)

func testObjects() map[string]any {
	created := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	pod := map[string]any{
		"kind": "Pod", "apiVersion": "v1",
		"metadata": map[string]any{"name": "web", "namespace": "default", "creationTimestamp": created,
			"labels": map[string]any{"app": "web"}, "annotations": map[string]any{"load": "0.8"}},
		"spec": map[string]any{"nodeName": "node-0", "containers": []any{
			map[string]any{"name": "app", "image": "nginx", "resources": map[string]any{"requests": map[string]any{"cpu": "500m", "memory": "1Gi"}}},
			map[string]any{"name": "sidecar", "image": "envoy"},
		}},
		"status": map[string]any{"phase": "Running", "startTime": created,
			"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}},
	}
	node := map[string]any{
		"kind": "Node", "apiVersion": "v1",
		"metadata": map[string]any{"name": "node-0", "creationTimestamp": created, "labels": map[string]any{"zone": "a"}, "annotations": map[string]any{}},
		"status":   map[string]any{"allocatable": map[string]any{"cpu": "4", "memory": "16Gi"}},
	}
	return map[string]any{"pod": pod, "node": node}
}

// An object kept to the fields an expression reads gives the expression
// what the whole object gives it: the same number, or the same error.
func TestFieldsKeepWhatExpressionsRead(t *testing.T) {
	env, err := NewUsageEnv()
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{
		`Quantity("50m") * (1.0 + Rand()) > 0.0`,
		`pod.SinceSecond() > 30.0 ? Quantity("1") : Quantity("10m")`,
		`SinceSecond(node) > 30.0`,
		`Quantity(container.resources.requests.cpu) * Quantity(pod.metadata.annotations["load"])`,
		`Quantity(pod.spec.containers[0].resources.requests.memory)`,
		`pod.spec.containers.exists(c, c.name == "sidecar") ? 1 : 2`,
		`has(pod.status.startTime) && !has(pod.status.podIP) ? 1 : 0`,
		`"load" in pod.metadata.annotations ? 1 : 0`,
		`pod.metadata.labels.size()`,
		`size(pod.metadata)`,
		`pod == node ? 1 : 0`,
		`[pod, node].size()`,
		`{"a": pod}.a.metadata.name == "web" ? 1 : 0`,
		`node.metadata.name == pod.spec.nodeName ? Quantity(node.status.allocatable.cpu) : 0.0`,
		`container.name == "app" ? 1 : 0`,
		`size(container) + 0`,
		`pod.metadata.name.size()`,
		`Quantity(pod.metadata.annotations["nope"])`, // an error either way
		`pod.spec.nope.deeper`,
		`pod.spec.containers.name`,
		`[1, 2].exists(pod, pod == 2) ? 1 : 0`,
	} {
		p, err := env.Compile(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		whole := testObjects()
		whole["container"] = whole["pod"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0]
		kept := map[string]any{}
		for _, name := range []string{"pod", "node"} {
			if f := p.Fields(name); f != nil {
				kept[name] = f.Keep(whole[name])
			}
		}
		if f := p.Fields("container"); f != nil {
			kept["container"] = f.Keep(whole["container"])
		}
		want, wantErr := p.Number(whole)
		got, gotErr := p.Number(kept)
		if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) || (wantErr == nil && want != got && src != `Quantity("50m") * (1.0 + Rand()) > 0.0`) {
			t.Errorf("%s: on the kept fields %v (%v), on the whole objects %v (%v); kept %v", src, got, gotErr, want, wantErr, kept)
		}
	}
}

func TestFieldsRead(t *testing.T) {
	env, err := NewUsageEnv()
	if err != nil {
		t.Fatal(err)
	}
	meta := func(fields ...string) map[string]any {
		m := map[string]any{}
		for _, f := range fields {
			m[f] = "x"
		}
		return m
	}
	pod := map[string]any{"kind": "Pod", "metadata": meta("name", "namespace", "creationTimestamp", "uid"), "spec": map[string]any{}}
	for _, c := range []struct {
		src  string
		want any // pod kept to the fields read; nil: the pod is not read
	}{
		{`Quantity("50m") * (1.0 + Rand())`, nil},
		{`node.metadata.name == "n" ? 1 : 2`, nil},
		{`pod.SinceSecond()`, map[string]any{"metadata": meta("creationTimestamp")}},
		{`has(pod.metadata.name) ? 1 : 2`, map[string]any{"metadata": meta("name")}},
		{`pod.metadata.name == "x" && pod.spec != {} ? 1 : 2`, map[string]any{"metadata": meta("name"), "spec": map[string]any{}}},
		{`pod == pod ? 1 : 2`, pod},
	} {
		p, err := env.Compile(c.src)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		f := p.Fields("pod")
		if c.want == nil {
			if f != nil {
				t.Errorf("%s reads no pod, yet keeps %v of it", c.src, f.Keep(pod))
			}
			continue
		}
		if got := f.Keep(pod); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s keeps %v of the pod, want %v", c.src, got, c.want)
		}
	}
}

func TestFieldsMerge(t *testing.T) {
	f := &Fields{}
	c := &Fields{}
	c.Add("resources", "requests")
	f.Merge(c, "spec", "containers")
	f.Add("spec", "containers", "name")
	f.Add("metadata", "name")
	pod := map[string]any{"metadata": map[string]any{"name": "p", "uid": "u"}, "spec": map[string]any{"nodeName": "n", "containers": []any{
		map[string]any{"name": "a", "image": "i", "resources": map[string]any{"requests": map[string]any{"cpu": "1"}, "limits": map[string]any{}}}}}}
	want := map[string]any{"metadata": map[string]any{"name": "p"}, "spec": map[string]any{"containers": []any{
		map[string]any{"name": "a", "resources": map[string]any{"requests": map[string]any{"cpu": "1"}}}}}}
	if got := f.Keep(pod); !reflect.DeepEqual(got, want) {
		t.Errorf("kept %v, want %v", got, want)
	}
	whole := f.Clone()
	all := &Fields{}
	all.Add()
	whole.Merge(all, "spec")
	if whole.Keep(pod).(map[string]any)["spec"].(map[string]any)["nodeName"] != "n" || f.Equal(whole) {
		t.Errorf("merging all of spec: %v", whole.Keep(pod))
	}
}
