package kubeletsim

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func stageFor(name, apiGroup, kind string) any {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "Stage",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"resourceRef": map[string]any{"apiGroup": apiGroup, "kind": kind}},
	}}
}

// The simulator is granted exactly the kinds Stages name, besides nodes
// and pods; a kind not served yet is an error, the others granted anyway.
func TestStageKindRulesGrantWhatStagesName(t *testing.T) {
	mapper := meta.NewDefaultRESTMapper([]schema.GroupVersion{{Version: "v1"}, {Group: "apps", Version: "v1"}})
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "Service"}, meta.RESTScopeNamespace)
	mapper.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, meta.RESTScopeNamespace)
	rules, err := stageKindRules([]any{
		stageFor("pod-ready", "v1", "Pod"),
		stageFor("lb", "v1", "Service"),
		stageFor("lb-again", "", "Service"),
		stageFor("rollout", "apps/v1", "Deployment"),
		stageFor("widgets", "example.com", "Widget"),
	}, mapper)
	if err == nil || !strings.Contains(err.Error(), "widgets") {
		t.Errorf("an unserved kind: %v", err)
	}
	var got []string
	for _, r := range rules {
		got = append(got, r.APIGroups[0]+"/"+strings.Join(r.Resources, ","))
		if strings.Join(r.Verbs, ",") != "get,list,watch,patch,delete" {
			t.Errorf("verbs %v", r.Verbs)
		}
	}
	if strings.Join(got, " ") != "/services,services/status apps/deployments,deployments/status" {
		t.Errorf("rules %v", got)
	}
}

// A Stage's apply steps get exactly the kinds their templates write, with
// the subresources they patch; its impersonations, exactly those users.
func TestStageKindRulesGrantWhatApplyStepsWrite(t *testing.T) {
	mapper := meta.NewDefaultRESTMapper([]schema.GroupVersion{{Version: "v1"}})
	for _, k := range []string{"PersistentVolume", "PersistentVolumeClaim"} {
		mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: k}, meta.RESTScopeRoot)
	}
	pvc := stageFor("pvc-provision", "v1", "PersistentVolumeClaim").(*unstructured.Unstructured)
	pvc.Object["spec"].(map[string]any)["steps"] = []any{
		map[string]any{"apply": map[string]any{"template": "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: x}\n"}},
		map[string]any{"apply": map[string]any{"template": "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: x}\n",
			"subresource": "status", "impersonation": map[string]any{"username": "bob"}}},
		map[string]any{"patch": map[string]any{"template": "a: b", "impersonation": map[string]any{"username": "alice"}}},
	}
	rules, err := stageKindRules([]any{pvc, stageFor("node", "v1", "Node")}, mapper)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rules {
		got = append(got, r.APIGroups[0]+"/"+strings.Join(r.Resources, ",")+" "+strings.Join(r.Verbs, ",")+" "+strings.Join(r.ResourceNames, ","))
	}
	want := "/persistentvolumeclaims,persistentvolumeclaims/status get,list,watch,patch,delete |" +
		"/persistentvolumes,persistentvolumes/status get,create,patch |" +
		"/users impersonate alice,bob"
	if strings.Join(got, "|") != want {
		t.Errorf("rules\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}
}
