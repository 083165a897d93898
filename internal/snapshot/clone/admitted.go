package clone

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/plugin/pkg/admission/limitranger"
)

// admitted tells whether the API server's admission plugins would take a
// pod just as it is, changing and refusing nothing: its namespace and
// service account exist in the clone; its priority class, runtime class,
// the namespace's LimitRanges, the default tolerations and its node's
// topology labels give it what it carries. A pod exported from a cluster
// is so (that cluster admitted it, and its classes came along), but for
// one made before its cluster copied topology labels (Kubernetes 1.35),
// or edited by hand. Such a pod goes through the API server, whose
// admission decides: written straight into etcd, it would keep what
// admission would have changed or refused.
type admitted struct {
	namespaces      map[string]bool
	serviceAccounts map[string]bool // namespace/name
	priorities      map[string]schedulingv1.PriorityClass
	globalDefault   bool
	runtimeClasses  map[string]nodev1.RuntimeClass
	limitRanges     map[string][]corev1.LimitRange // by namespace
	nodeLabels      map[string]map[string]string
}

// topologyLabels are the node labels upstream's PodTopologyLabels
// admission copies onto a pod bound to the node.
var topologyLabels = []string{corev1.LabelTopologyZone, corev1.LabelTopologyRegion}

func listAdmission(ctx context.Context, c kubernetes.Interface, nodes []*corev1.Node) (*admitted, error) {
	a := &admitted{namespaces: map[string]bool{}, serviceAccounts: map[string]bool{},
		priorities: map[string]schedulingv1.PriorityClass{}, runtimeClasses: map[string]nodev1.RuntimeClass{},
		limitRanges: map[string][]corev1.LimitRange{}, nodeLabels: map[string]map[string]string{}}
	for _, n := range nodes {
		a.nodeLabels[n.Name] = n.Labels
	}
	all := metav1.ListOptions{}
	namespaces, err := c.CoreV1().Namespaces().List(ctx, all)
	if err != nil {
		return nil, fmt.Errorf("listing the clone's namespaces: %w", err)
	}
	for _, ns := range namespaces.Items {
		a.namespaces[ns.Name] = ns.DeletionTimestamp == nil
	}
	accounts, err := c.CoreV1().ServiceAccounts("").List(ctx, all)
	if err != nil {
		return nil, fmt.Errorf("listing the clone's service accounts: %w", err)
	}
	for _, sa := range accounts.Items {
		a.serviceAccounts[sa.Namespace+"/"+sa.Name] = true
	}
	priorities, err := c.SchedulingV1().PriorityClasses().List(ctx, all)
	if err != nil {
		return nil, fmt.Errorf("listing the clone's PriorityClasses: %w", err)
	}
	for _, pc := range priorities.Items {
		a.priorities[pc.Name] = pc
		a.globalDefault = a.globalDefault || pc.GlobalDefault
	}
	runtimes, err := c.NodeV1().RuntimeClasses().List(ctx, all)
	if err != nil {
		return nil, fmt.Errorf("listing the clone's RuntimeClasses: %w", err)
	}
	for _, rc := range runtimes.Items {
		a.runtimeClasses[rc.Name] = rc
	}
	ranges, err := c.CoreV1().LimitRanges("").List(ctx, all)
	if err != nil {
		return nil, fmt.Errorf("listing the clone's LimitRanges: %w", err)
	}
	for _, lr := range ranges.Items {
		a.limitRanges[lr.Namespace] = append(a.limitRanges[lr.Namespace], lr)
	}
	return a, nil
}

// modelled are the kube-apiserver admission plugins that may change or
// refuse a pod on its create, each with the check of admitted that
// stands for it, in the order why runs them. The plugins upstream enables
// by default that are not here leave a restored pod alone, each for the
// reason TestEveryDefaultAdmissionPluginIsReviewed gives; that test fails
// on a plugin upstream adds until it is modelled here or reviewed there.
var modelled = []struct {
	plugin string
	check  func(*admitted, *corev1.Pod) string
}{
	{"NamespaceLifecycle", (*admitted).namespace},
	{"ServiceAccount", (*admitted).serviceAccount},
	{"Priority", (*admitted).priority},
	{"RuntimeClass", (*admitted).runtimeClass},
	{"DefaultTolerationSeconds", func(_ *admitted, pod *corev1.Pod) string { return defaultTolerations(pod) }},
	{"PodTopologyLabels", (*admitted).topology},
	{"LimitRanger", (*admitted).limits},
}

// why says what admission would do otherwise with pod; "" if nothing.
func (a *admitted) why(pod *corev1.Pod) string {
	for _, m := range modelled {
		if why := m.check(a, pod); why != "" {
			return why
		}
	}
	return ""
}

// namespace is upstream's NamespaceLifecycle: no create in a namespace
// that does not exist or is being deleted.
func (a *admitted) namespace(pod *corev1.Pod) string {
	if !a.namespaces[pod.Namespace] {
		return "its namespace does not exist"
	}
	return ""
}

// serviceAccount is upstream's ServiceAccount admission: a pod naming
// none is given the default, one naming a missing account is refused.
// (The token volume it mounts, the source's admission added.)
func (a *admitted) serviceAccount(pod *corev1.Pod) string {
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		return "it names no service account (admission gives it one)"
	}
	if !a.serviceAccounts[pod.Namespace+"/"+sa] {
		return fmt.Sprintf("its service account %s does not exist", sa)
	}
	return ""
}

// runtimeClass is what upstream's RuntimeClass admission checks and sets:
// the class's overhead, node selector and tolerations.
func (a *admitted) runtimeClass(pod *corev1.Pod) string {
	name := pod.Spec.RuntimeClassName
	if name == nil {
		return ""
	}
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
	if rc.Scheduling == nil {
		return ""
	}
	for k, v := range rc.Scheduling.NodeSelector {
		if pod.Spec.NodeSelector[k] != v {
			return fmt.Sprintf("it lacks its RuntimeClass %s's node selector %s=%s", *name, k, v)
		}
	}
	for _, t := range rc.Scheduling.Tolerations {
		if !slices.ContainsFunc(pod.Spec.Tolerations, func(have corev1.Toleration) bool { return apiequality.Semantic.DeepEqual(have, t) }) {
			return fmt.Sprintf("it lacks its RuntimeClass %s's toleration of %s", *name, t.Key)
		}
	}
	return ""
}

// defaultTolerations is upstream's DefaultTolerationSeconds: a pod that
// tolerates neither not-ready nor unreachable nodes (NoExecute) gets
// tolerations of them.
func defaultTolerations(pod *corev1.Pod) string {
	for _, key := range []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable} {
		if !slices.ContainsFunc(pod.Spec.Tolerations, func(t corev1.Toleration) bool {
			return (t.Key == key || t.Key == "") && (t.Effect == corev1.TaintEffectNoExecute || t.Effect == "")
		}) {
			return fmt.Sprintf("it does not tolerate %s (admission adds a toleration)", key)
		}
	}
	return ""
}

// topology is upstream's PodTopologyLabels: a pod bound to a node gets
// the node's zone and region labels.
func (a *admitted) topology(pod *corev1.Pod) string {
	for _, key := range topologyLabels {
		if v, ok := a.nodeLabels[pod.Spec.NodeName][key]; ok && pod.Labels[key] != v {
			return fmt.Sprintf("it lacks its node's label %s=%s (admission copies it)", key, v)
		}
	}
	return ""
}

// limits is upstream's LimitRanger, run on the pod: the namespace's
// LimitRanges neither add requests or limits to it nor refuse it.
func (a *admitted) limits(pod *corev1.Pod) string {
	ranges := a.limitRanges[pod.Namespace]
	if len(ranges) == 0 {
		return ""
	}
	internal := &api.Pod{}
	if err := legacyscheme.Scheme.Convert(pod.DeepCopy(), internal, nil); err != nil {
		return err.Error()
	}
	for i := range ranges {
		mutated := internal.DeepCopy()
		if err := limitranger.PodMutateLimitFunc(&ranges[i], mutated); err != nil {
			return fmt.Sprintf("LimitRange %s: %v", ranges[i].Name, err)
		}
		if !apiequality.Semantic.DeepEqual(mutated, internal) {
			return fmt.Sprintf("LimitRange %s gives it requests or limits it lacks", ranges[i].Name)
		}
		if err := limitranger.PodValidateLimitFunc(&ranges[i], internal); err != nil {
			return fmt.Sprintf("LimitRange %s: %s", ranges[i].Name, oneLine(err))
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
		if pod.Spec.PreemptionPolicy == nil {
			return "it has no preemption policy (admission gives it one)"
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
