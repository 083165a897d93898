package controlplane

import (
	"testing"

	"k8s.io/apiserver/pkg/apis/audit"
	"k8s.io/apiserver/pkg/audit/policy"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

func TestDefaultAuditPolicyLeavesOutOnlyTheSystemsPerPodWrites(t *testing.T) {
	p, err := policy.LoadPolicyFromBytes([]byte(DefaultAuditPolicy))
	if err != nil {
		t.Fatal(err)
	}
	eval := policy.NewPolicyRuleEvaluator(p)
	simulator := &user.DefaultInfo{Name: "kubesim:kubelet-sim", Groups: []string{"system:nodes", "system:authenticated"}}
	scheduler := &user.DefaultInfo{Name: "system:kube-scheduler", Groups: []string{"system:authenticated"}}
	admin := &user.DefaultInfo{Name: "kubesim:admin", Groups: []string{"system:masters", "system:authenticated"}}
	for _, tc := range []struct {
		who                 user.Info
		verb, resource, sub string
		want                audit.Level
	}{
		{simulator, "patch", "pods", "status", audit.LevelNone},
		{simulator, "patch", "nodes", "status", audit.LevelNone},
		{scheduler, "create", "pods", "binding", audit.LevelNone},
		{simulator, "delete", "pods", "", audit.LevelMetadata},    // its deletes stay
		{admin, "patch", "pods", "status", audit.LevelMetadata},   // anyone else's status writes stay
		{admin, "create", "pods", "binding", audit.LevelMetadata}, // and bindings
		{admin, "create", "configmaps", "", audit.LevelMetadata},
		{admin, "get", "pods", "", audit.LevelNone},
	} {
		attrs := authorizer.AttributesRecord{User: tc.who, Verb: tc.verb, Resource: tc.resource, Subresource: tc.sub, ResourceRequest: true, Namespace: "default"}
		if got := eval.EvaluatePolicyRule(attrs).Level; got != tc.want {
			t.Errorf("%s %s %s/%s: level %s, want %s", tc.who.GetName(), tc.verb, tc.resource, tc.sub, got, tc.want)
		}
	}
}
