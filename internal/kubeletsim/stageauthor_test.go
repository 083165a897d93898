package kubeletsim

import (
	"context"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubesim/kubesim/apis/kwok/v1alpha1"
)

// sarClient answers SubjectAccessReviews from allowed: "verb group/resource[/sub][ name]" → true.
func sarClient(allowed func(a *authorizationv1.ResourceAttributes, user string) bool) *fake.Clientset {
	client := fake.NewClientset()
	client.PrependReactor("create", "subjectaccessreviews", func(action k8stesting.Action) (bool, runtime.Object, error) {
		sar := action.(k8stesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview)
		sar.Status.Allowed = allowed(sar.Spec.ResourceAttributes, sar.Spec.User)
		return true, sar, nil
	})
	return client
}

func authorMapper() meta.RESTMapper {
	mapper := meta.NewDefaultRESTMapper([]schema.GroupVersion{{Version: "v1"}, {Group: "rbac.authorization.k8s.io", Version: "v1"}})
	for _, gvk := range []schema.GroupVersionKind{
		{Version: "v1", Kind: "Secret"}, {Version: "v1", Kind: "ConfigMap"}, {Version: "v1", Kind: "Pod"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"},
	} {
		mapper.Add(gvk, meta.RESTScopeNamespace)
	}
	return mapper
}

func authorStage(name, kind, template, as string) *v1alpha1.Stage {
	s := &v1alpha1.Stage{}
	s.Name = name
	s.Spec.ResourceRef = v1alpha1.StageResourceRef{APIGroup: "v1", Kind: kind}
	if template != "" {
		step := v1alpha1.StageStep{Apply: &v1alpha1.StageApply{Template: template}}
		if as != "" {
			step.Apply.Impersonation = &v1alpha1.ImpersonationConfig{Username: as}
		}
		s.Spec.Steps = append(s.Spec.Steps, step)
	}
	return s
}

// The attacks of issue 47 — a Stage writing ClusterRoleBindings, one
// impersonating a system user, one reading Secrets — are refused for a
// user who may only create Stages (and, for the last, read ConfigMaps),
// each naming the right missing; a cluster admin's same Stages pass.
func TestStageAuthorMustHoldWhatTheStageUses(t *testing.T) {
	mallory := func(a *authorizationv1.ResourceAttributes, user string) bool {
		return a.Resource == "configmaps" || a.Resource == "pods"
	}
	admin := func(*authorizationv1.ResourceAttributes, string) bool { return true }
	crb := "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: x}\n"
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: default}\n"
	for _, tc := range []struct {
		stage *v1alpha1.Stage
		want  string
	}{
		{authorStage("bind-me", "Pod", crb, ""), `mallory may not create clusterrolebindings.rbac.authorization.k8s.io cluster-wide, and its apply steps write it`},
		{authorStage("as-kcm", "Pod", cm, "system:kube-controller-manager"), `mallory may not impersonate users system:kube-controller-manager, and its writes are made as system:kube-controller-manager`},
		{authorStage("leak", "Secret", cm, ""), `mallory may not get secrets cluster-wide, and it acts on secrets`},
	} {
		sar := sarClient(mallory).AuthorizationV1().SubjectAccessReviews()
		got, err := authorRefusal(context.Background(), sar, authorMapper(), tc.stage, authenticationv1.UserInfo{Username: "mallory"})
		if err != nil || !strings.Contains(got, tc.want) || strings.Contains(got, "\n") {
			t.Errorf("%s: %q, %v; want one line with %q", tc.stage.Name, got, err, tc.want)
		}
		sar = sarClient(admin).AuthorizationV1().SubjectAccessReviews()
		if got, err := authorRefusal(context.Background(), sar, authorMapper(), tc.stage, authenticationv1.UserInfo{Username: "admin"}); got != "" || err != nil {
			t.Errorf("%s by an admin: %q, %v", tc.stage.Name, got, err)
		}
	}
}

// Writing RBAC objects needs bind and escalate too: the simulator's own
// roles would otherwise be bound by whoever may create bindings.
func TestStageAuthorWritingRBACNeedsEscalate(t *testing.T) {
	mayWriteBindings := func(a *authorizationv1.ResourceAttributes, _ string) bool {
		return a.Verb != "escalate" && a.Verb != "bind"
	}
	s := authorStage("bind", "Pod", "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: x}\n", "")
	sar := sarClient(mayWriteBindings).AuthorizationV1().SubjectAccessReviews()
	got, _ := authorRefusal(context.Background(), sar, authorMapper(), s, authenticationv1.UserInfo{Username: "dev"})
	if !strings.Contains(got, "may not bind clusterroles.rbac.authorization.k8s.io") {
		t.Errorf("got %q", got)
	}
}

// A kind not served yet is checked against every resource of its group:
// only an admin's wildcard covers what it will be.
func TestStageAuthorOfUnservedKindNeedsTheGroup(t *testing.T) {
	s := authorStage("widgets", "Widget", "", "")
	s.Spec.ResourceRef.APIGroup = "example.com/v1"
	var asked []string
	sar := sarClient(func(a *authorizationv1.ResourceAttributes, _ string) bool {
		asked = append(asked, a.Verb+" "+a.Group+"/"+a.Resource)
		return a.Resource != "*"
	}).AuthorizationV1().SubjectAccessReviews()
	got, _ := authorRefusal(context.Background(), sar, authorMapper(), s, authenticationv1.UserInfo{Username: "dev"})
	if !strings.Contains(got, `every resource of group "example.com"`) || !strings.Contains(got, "does not serve yet") {
		t.Errorf("got %q (asked %v)", got, asked)
	}
}
