package scenario

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

func init() {
	checkKinds.register(&checkKind{
		name:     "event",
		describe: func(a *v1alpha1.Assertion) string { return "event " + a.Event.Reason },
		evaluate: func(v *view, a *v1alpha1.Assertion) (bool, string, string) { return v.event(a.Event) },
	})
}

func (v *view) event(e *v1alpha1.EventAssertion) (bool, string, string) {
	ns := namespaceOrDefault(e.Namespace)
	list, err := v.t.client.CoreV1().Events(ns).List(v.ctx, metav1.ListOptions{FieldSelector: "reason=" + e.Reason})
	if err != nil {
		return false, "", err.Error()
	}
	exp := fmt.Sprintf("an event %s on %s %s saying %q", e.Reason, e.Kind, e.Name, e.Message)
	for _, ev := range list.Items {
		o := ev.InvolvedObject
		name := strings.TrimSuffix(e.Name, "*")
		if (e.Kind == "" || o.Kind == e.Kind) &&
			(e.Name == "" || o.Name == e.Name || (strings.HasSuffix(e.Name, "*") && strings.HasPrefix(o.Name, name))) &&
			strings.Contains(ev.Message, e.Message) {
			return true, exp, fmt.Sprintf("%s on %s/%s: %s", ev.Reason, o.Kind, o.Name, ev.Message)
		}
	}
	return false, exp, fmt.Sprintf("%d %s events, none matching", len(list.Items), e.Reason)
}
