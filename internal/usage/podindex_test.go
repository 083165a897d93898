package usage

import (
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// A read by label selector through the label index finds the pods the
// lister finds, whatever the selector.
func TestPodIndexListsAsTheLister(t *testing.T) {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc, labelIndex: indexByLabels})
	for i := range 60 {
		lbls := map[string]string{"app": fmt.Sprintf("app-%d", i%6), "tier": []string{"web", "db", "cache"}[i%3]}
		if i%5 == 0 {
			lbls["canary"] = "true"
		}
		if i%7 == 0 {
			lbls = nil
		}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: []string{"shop", "other"}[i%2], Name: fmt.Sprintf("p%d", i), Labels: lbls}}
		if err := indexer.Add(pod); err != nil {
			t.Fatal(err)
		}
	}
	lister := corelisters.NewPodLister(indexer)
	x := podIndex{lister, indexer}
	for _, sel := range []string{"", "app=app-1", "app==app-2,tier=db", "app in (app-3)", "app in (app-3,app-4)", "app!=app-1",
		"tier=web,canary", "!canary", "app notin (app-0),tier=cache", "app=none", "canary=true,tier in (web)"} {
		selector, err := labels.Parse(sel)
		if err != nil {
			t.Fatal(err)
		}
		for _, ns := range []string{metav1.NamespaceAll, "shop", "other", "none"} {
			var want []*corev1.Pod
			if ns == metav1.NamespaceAll {
				want, err = lister.List(selector)
			} else {
				want, err = lister.Pods(ns).List(selector)
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := x.list(ns, selector)
			if err != nil {
				t.Fatal(err)
			}
			if names(got) != names(want) {
				t.Errorf("%q in %q: %s, want %s", sel, ns, names(got), names(want))
			}
		}
	}
	if got, err := x.list("shop", labels.Nothing()); err != nil || len(got) != 0 {
		t.Errorf("nothing selects %s (%v)", names(got), err)
	}
}

func names(pods []*corev1.Pod) string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Namespace+"/"+p.Name)
	}
	slices.Sort(out)
	return fmt.Sprint(out)
}
