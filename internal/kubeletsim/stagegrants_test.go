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
