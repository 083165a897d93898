package kubeletsim

import (
	"context"
	"fmt"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"

	"github.com/kubesim/kubesim/apis/kwok/v1alpha1"
	"github.com/kubesim/kubesim/internal/stage"
)

// A Stage acts with no more rights than its author holds. The simulator
// is granted what the cluster's Stages name (stagegrants.go), so whoever
// could create a Stage naming ClusterRoleBindings, Secrets or a system
// user would otherwise hold those rights through it. So before a Stage is
// admitted, its author must hold, cluster-wide, every right it would
// have the simulator hold — asked of the API server's own authorizer
// (SubjectAccessReviews, as the author) — or it is refused, naming the
// first right missing.

// authorRight is one right a Stage's author must hold, and why.
type authorRight struct {
	attrs authorizationv1.ResourceAttributes
	why   string // "it acts on", "its apply steps write", ...
}

func (r authorRight) String() string {
	a := r.attrs
	what := a.Resource
	if a.Group != "" {
		what += "." + a.Group
	}
	if a.Subresource != "" {
		what += "/" + a.Subresource
	}
	if a.Name != "" {
		what += " " + a.Name
	}
	if a.Resource == "*" {
		what = "every resource of group " + quoteGroup(a.Group)
	}
	if a.Resource != "users" {
		what += " cluster-wide"
	}
	return a.Verb + " " + what
}

func quoteGroup(g string) string {
	if g == "" {
		return `"" (core)`
	}
	return fmt.Sprintf("%q", g)
}

func right(verb, group, resource, sub, name, why string) authorRight {
	return authorRight{attrs: authorizationv1.ResourceAttributes{
		Verb: verb, Group: group, Resource: resource, Subresource: sub, Name: name}, why: why}
}

// authorRights lists the rights s's author must hold, the telling first
// (whom it impersonates, what it writes, what it acts on): those stageWants
// has the simulator hold; for RBAC kinds written, also bind and escalate
// (the simulator's own roles would otherwise be hers to bind); for kinds
// not served yet, the verbs on every resource of their group (an admin's
// wildcard), since which resource they will be is not known.
func authorRights(s *v1alpha1.Stage, mapper meta.RESTMapper) ([]authorRight, error) {
	w, err := wantsOf(s, mapper)
	if r, ok := mapper.(meta.ResettableRESTMapper); ok && err == nil && len(w.unserved) > 0 {
		r.Reset() // a CRD may have arrived since discovery was cached
		w, err = wantsOf(s, mapper)
	}
	if err != nil {
		return nil, err
	}
	var rights []authorRight
	group, kind := stage.RefGroupKind(s.Spec.ResourceRef)
	if group == "" && (kind == "Node" || kind == "Pod") {
		// The simulator holds these already; the Stage spends them.
		w.acted = append(w.acted, schema.GroupResource{Resource: strings.ToLower(kind) + "s"})
	}
	for _, u := range w.users {
		rights = append(rights, right("impersonate", "", "users", "", u, "its writes are made as "+u))
	}
	grs := make([]schema.GroupResource, 0, len(w.written))
	for gr := range w.written {
		grs = append(grs, gr)
	}
	slices.SortFunc(grs, func(a, b schema.GroupResource) int { return strings.Compare(a.String(), b.String()) })
	for _, gr := range grs {
		const why = "its apply steps write it"
		for _, v := range []string{"create", "patch", "get"} { // writtenVerbs, the telling first
			rights = append(rights, right(v, gr.Group, gr.Resource, "", "", why))
		}
		for _, sub := range w.written[gr] {
			rights = append(rights, right("patch", gr.Group, gr.Resource, sub, "", why))
		}
		if gr.Group == "rbac.authorization.k8s.io" {
			for _, r := range []string{"clusterroles", "roles"} {
				for _, v := range []string{"bind", "escalate"} {
					rights = append(rights, right(v, gr.Group, r, "", "", "its apply steps write "+gr.String()))
				}
			}
		}
	}
	for _, gr := range w.acted {
		for _, v := range actedVerbs {
			rights = append(rights, right(v, gr.Group, gr.Resource, "", "", "it acts on "+gr.String()))
		}
		rights = append(rights, right("patch", gr.Group, gr.Resource, "status", "", "it acts on "+gr.String()))
	}
	for _, gk := range w.unserved {
		why := fmt.Sprintf("it names kind %s, which the API server does not serve yet", gk)
		for _, v := range slices.Concat(actedVerbs, []string{"create"}) {
			rights = append(rights, right(v, gk.Group, "*", "", "", why))
		}
	}
	return rights, nil
}

// authorRefusal says why user may not create or change s into what it is
// ("" if they may): the first right of authorRights they lack.
func authorRefusal(ctx context.Context, sar authorizationclient.SubjectAccessReviewInterface, mapper meta.RESTMapper,
	s *v1alpha1.Stage, user authenticationv1.UserInfo) (string, error) {
	rights, err := authorRights(s, mapper)
	if err != nil {
		return "", nil // not a Stage the simulator runs: it says so in the Stage's status
	}
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range user.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	for _, r := range rights {
		attrs := r.attrs
		review, err := sar.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			ResourceAttributes: &attrs, User: user.Username, Groups: user.Groups, UID: user.UID, Extra: extra,
		}}, metav1.CreateOptions{})
		if err != nil {
			return "", fmt.Errorf("asking whether %s may %s: %w", user.Username, r, err)
		}
		if !review.Status.Allowed {
			return fmt.Sprintf("Stage %q: %s may not %s, and %s: a Stage acts with no more rights than its author holds; "+
				"have a cluster admin create it, or be granted that right", s.Name, user.Username, r, r.why), nil
		}
	}
	return "", nil
}
