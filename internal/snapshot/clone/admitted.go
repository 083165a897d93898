package clone

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// admitted tells whether the API server's admission would take a pod
// just as it is: its namespace and service account exist in the clone,
// and its priority class and runtime class give it the priority,
// preemption policy and overhead it carries. A pod exported from a
// cluster always is (that cluster admitted it, and its classes came
// along); one edited by hand or made elsewhere may not be. Such a pod
// goes through the API server, whose admission decides: written
// straight into etcd, it would keep what admission would have changed or
// refused.
type admitted struct {
	namespaces      map[string]bool
	serviceAccounts map[string]bool // namespace/name
	priorities      map[string]schedulingv1.PriorityClass
	globalDefault   bool
	runtimeClasses  map[string]nodev1.RuntimeClass
}

func listAdmission(ctx context.Context, c kubernetes.Interface) (*admitted, error) {
	a := &admitted{namespaces: map[string]bool{}, serviceAccounts: map[string]bool{},
		priorities: map[string]schedulingv1.PriorityClass{}, runtimeClasses: map[string]nodev1.RuntimeClass{}}
	all := metav1.ListOptions{}
	namespaces, err := c.CoreV1().Namespaces().List(ctx, all)
	if err != nil {
		return nil, err
	}
	for _, ns := range namespaces.Items {
		a.namespaces[ns.Name] = ns.DeletionTimestamp == nil
	}
	accounts, err := c.CoreV1().ServiceAccounts("").List(ctx, all)
	if err != nil {
		return nil, err
	}
	for _, sa := range accounts.Items {
		a.serviceAccounts[sa.Namespace+"/"+sa.Name] = true
	}
	priorities, err := c.SchedulingV1().PriorityClasses().List(ctx, all)
	if err != nil {
		return nil, err
	}
	for _, pc := range priorities.Items {
		a.priorities[pc.Name] = pc
		a.globalDefault = a.globalDefault || pc.GlobalDefault
	}
	runtimes, err := c.NodeV1().RuntimeClasses().List(ctx, all)
	if err != nil {
		return nil, err
	}
	for _, rc := range runtimes.Items {
		a.runtimeClasses[rc.Name] = rc
	}
	return a, nil
}

// why says what admission would do otherwise with pod; "" if nothing.
func (a *admitted) why(pod *corev1.Pod) string {
	if !a.namespaces[pod.Namespace] {
		return "its namespace does not exist"
	}
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	if !a.serviceAccounts[pod.Namespace+"/"+sa] {
		return fmt.Sprintf("its service account %s does not exist", sa)
	}
	if why := a.priority(pod); why != "" {
		return why
	}
	if name := pod.Spec.RuntimeClassName; name != nil {
		rc, ok := a.runtimeClasses[*name]
		if !ok {
			return fmt.Sprintf("its RuntimeClass %s does not exist", *name)
		}
		var overhead corev1.ResourceList
		if rc.Overhead != nil {
			overhead = rc.Overhead.PodFixed
		}
		if !apiequality.Semantic.DeepEqual(pod.Spec.Overhead, overhead) {
			return fmt.Sprintf("its overhead is not its RuntimeClass %s's", *name)
		}
	}
	return ""
}

// priority is what upstream's Priority admission checks and sets.
func (a *admitted) priority(pod *corev1.Pod) string {
	name := pod.Spec.PriorityClassName
	if name == "" {
		if a.globalDefault {
			return "it names no PriorityClass, and the clone has a global default"
		}
		if pod.Spec.Priority == nil || *pod.Spec.Priority != 0 {
			return "it names no PriorityClass but has a priority other than 0"
		}
		return ""
	}
	pc, ok := a.priorities[name]
	if !ok {
		return fmt.Sprintf("its PriorityClass %s does not exist", name)
	}
	if pod.Spec.Priority == nil || *pod.Spec.Priority != pc.Value {
		return fmt.Sprintf("its priority is not its PriorityClass %s's", name)
	}
	if pc.PreemptionPolicy != nil && (pod.Spec.PreemptionPolicy == nil || *pod.Spec.PreemptionPolicy != *pc.PreemptionPolicy) {
		return fmt.Sprintf("its preemption policy is not its PriorityClass %s's", name)
	}
	return ""
}
