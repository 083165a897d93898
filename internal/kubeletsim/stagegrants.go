package kubeletsim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/kubesim/kubesim/apis/kwok/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/credentials"
	"github.com/kubesim/kubesim/internal/stage"
)

// In a kubesim cluster the kubelet simulator may act on the kinds the
// cluster's Stages name — and on no other: a Stage for Services lets it
// get, list, watch, patch and delete Services, the moment it is applied,
// and never Secrets unless a Stage names them. The supervisor keeps one
// ClusterRole, bound to the simulator, in step with the Stages.

// stageKindsRole holds the simulator's rights on the kinds Stages name
// (nodes and pods are in its own role already). Bootstrap binds it empty;
// grantStageKinds fills it in.
const stageKindsRole = "kubesim:kubelet-sim:stage-kinds"

var stageKindsRoleManifest = []byte("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: " + stageKindsRole + "}\n")

// grantStageKinds keeps stageKindsRole's rules in step with the cluster's
// Stages until ctx ends. A kind the API server does not serve yet (its CRD
// is still coming) is looked for again a few seconds later.
func grantStageKinds(ctx context.Context, d clusterdir.Dir, logf func(string, ...any)) {
	cfg, err := credentials.AdminConfig(d)
	if err != nil {
		logf("granting the simulator the kinds of Stages: %v", err)
		return
	}
	client, err1 := kubernetes.NewForConfig(cfg)
	dyn, err2 := dynamic.NewForConfig(cfg)
	disc, err3 := discovery.NewDiscoveryClientForConfig(cfg)
	if err := errors.Join(err1, err2, err3); err != nil {
		logf("granting the simulator the kinds of Stages: %v", err)
		return
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	informer := dynamicinformer.NewFilteredDynamicInformer(dyn, v1alpha1.StagesResource, metav1.NamespaceAll, 0, cache.Indexers{}, nil).Informer()
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Second, stageRetryCap),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "stage-kinds"})
	const key = "stages" // one key: a burst of changes is one update
	_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { queue.Add(key) },
		UpdateFunc: func(any, any) { queue.Add(key) },
		DeleteFunc: func(any) { queue.Add(key) },
	})
	go informer.Run(ctx.Done())
	go func() { <-ctx.Done(); queue.ShutDown() }()
	for {
		k, quit := queue.Get()
		if quit {
			return
		}
		// The kinds that can be mapped are granted even while others wait.
		rules, err := stageKindRules(informer.GetStore().List(), mapper)
		err = errors.Join(err, setRules(ctx, client, rules))
		if err != nil {
			if ctx.Err() == nil {
				logf("granting the simulator the kinds of Stages (retrying): %v", err)
			}
			mapper.Reset() // a CRD may have arrived since discovery was cached
			queue.AddRateLimited(k)
		} else {
			queue.Forget(k)
		}
		queue.Done(k)
	}
}

// stageWants is what one Stage has the simulator hold: the kinds it acts
// on (get, list, watch, patch, delete, with status), the kinds its apply
// steps write (get, create, patch, with the subresources they patch), and
// the users its writes are made as (impersonate). Kinds not served yet
// are listed apart, with their group.
type stageWants struct {
	acted    []schema.GroupResource
	written  map[schema.GroupResource][]string // resource: subresources patched
	users    []string
	unserved []schema.GroupKind
}

// wantsOf reads what s has the simulator hold; err is for a Stage the
// simulator cannot run at all (it reports that itself).
func wantsOf(s *v1alpha1.Stage, mapper meta.RESTMapper) (stageWants, error) {
	w := stageWants{written: map[schema.GroupResource][]string{}}
	writes, err := stage.WritesOf(s)
	if err != nil {
		return w, err
	}
	w.users = writes.Users
	group, kind := stage.RefGroupKind(s.Spec.ResourceRef)
	if !(group == "" && (kind == "Node" || kind == "Pod")) {
		gk := schema.GroupKind{Group: group, Kind: kind}
		resources, err := resourcesOf(mapper, gk)
		if err != nil {
			w.unserved = append(w.unserved, gk)
		}
		w.acted = append(w.acted, resources...)
	}
	for _, gvk := range writes.Kinds {
		resources, err := resourcesOf(mapper, gvk.GroupKind())
		if err != nil {
			w.unserved = append(w.unserved, gvk.GroupKind())
		}
		for _, gr := range resources {
			w.written[gr] = append(w.written[gr], writes.Subresources[gvk]...)
		}
	}
	return w, nil
}

// stageKindRules are the simulator's rules for what stages name, sorted
// (stageWants, of every Stage). Kinds that cannot be mapped to a resource
// yet are an error, after the rules for the others.
func stageKindRules(stages []any, mapper meta.RESTMapper) ([]rbacv1.PolicyRule, error) {
	acted := map[schema.GroupResource]bool{}
	written := map[schema.GroupResource][]string{} // resource: subresources patched
	var users []string
	var errs []error
	for _, obj := range stages {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		s := &v1alpha1.Stage{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, s); err != nil {
			continue // the simulator reports a broken Stage itself
		}
		w, err := wantsOf(s, mapper)
		if err != nil {
			continue // likewise
		}
		for _, gk := range w.unserved {
			errs = append(errs, fmt.Errorf("stage %s: no resource serves kind %s yet", u.GetName(), gk))
		}
		users = append(users, w.users...)
		for _, gr := range w.acted {
			acted[gr] = true
		}
		for gr, subs := range w.written {
			written[gr] = append(written[gr], subs...)
		}
	}
	var rules []rbacv1.PolicyRule
	for gr := range acted {
		rules = append(rules, rbacv1.PolicyRule{
			APIGroups: []string{gr.Group},
			Resources: []string{gr.Resource, gr.Resource + "/status"},
			Verbs:     actedVerbs,
		})
	}
	for gr, subs := range written {
		resources := []string{gr.Resource}
		slices.Sort(subs)
		for _, sub := range slices.Compact(subs) {
			resources = append(resources, gr.Resource+"/"+sub)
		}
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{gr.Group}, Resources: resources, Verbs: writtenVerbs})
	}
	slices.SortFunc(rules, func(a, b rbacv1.PolicyRule) int {
		return strings.Compare(ruleKey(a), ruleKey(b))
	})
	if slices.Sort(users); len(users) > 0 {
		rules = append(rules, rbacv1.PolicyRule{
			APIGroups: []string{""}, Resources: []string{"users"}, Verbs: []string{"impersonate"},
			ResourceNames: slices.Compact(users),
		})
	}
	return rules, errors.Join(errs...)
}

// The verbs the simulator is granted on the kinds Stages act on and on
// the kinds their apply steps write.
var (
	actedVerbs   = []string{"get", "list", "watch", "patch", "delete"}
	writtenVerbs = []string{"get", "create", "patch"}
)

func ruleKey(r rbacv1.PolicyRule) string {
	return r.APIGroups[0] + "/" + r.Resources[0] + " " + strings.Join(r.Verbs, ",")
}

// resourcesOf maps a kind to the resources it is served as.
func resourcesOf(mapper meta.RESTMapper, gk schema.GroupKind) ([]schema.GroupResource, error) {
	mappings, err := mapper.RESTMappings(gk)
	var out []schema.GroupResource
	for _, m := range mappings {
		out = append(out, m.Resource.GroupResource())
	}
	return out, err
}

// setRules writes rules into stageKindsRole, unless they are there already.
func setRules(ctx context.Context, client kubernetes.Interface, rules []rbacv1.PolicyRule) error {
	roles := client.RbacV1().ClusterRoles()
	current, err := roles.Get(ctx, stageKindsRole, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if len(current.Rules) == 0 && len(rules) == 0 || slices.EqualFunc(current.Rules, rules, samePolicyRule) {
		return nil
	}
	current.Rules = rules
	_, err = roles.Update(ctx, current, metav1.UpdateOptions{})
	return err
}

func samePolicyRule(a, b rbacv1.PolicyRule) bool {
	return slices.Equal(a.APIGroups, b.APIGroups) && slices.Equal(a.Resources, b.Resources) &&
		slices.Equal(a.Verbs, b.Verbs) && slices.Equal(a.ResourceNames, b.ResourceNames)
}
