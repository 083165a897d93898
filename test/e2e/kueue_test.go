//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"
)

// queue is a ClusterQueue of 10 CPUs of one flavor and its LocalQueue in
// the default namespace.
const queue = `apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: 10}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: team, namespace: default}
spec: {clusterQueue: team}
`

var workloadsGVR = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "workloads"}

// queuedJob is a Job of one pod of 4 CPUs in LocalQueue team, whose pod
// runs for runFor.
func queuedJob(name, runFor string) *batchv1.Job {
	pod := corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers: []corev1.Container{{Name: "c", Image: "busybox",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}}}},
	}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"kueue.x-k8s.io/queue-name": "team"}},
		Spec: batchv1.JobSpec{
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"job": name}, Annotations: map[string]string{"kubesim.io/run-duration": runFor}},
				Spec:       pod,
			},
			BackoffLimit: ptr.To[int32](0),
		},
	}
}

// A cluster made with --addons kueue runs Kueue's own manager: a
// ClusterQueue of 10 CPUs admits two Jobs of 4 and holds the third,
// suspended, with Kueue's reason on its Workload; when one finishes, the
// third is admitted and runs. Kueue killed meanwhile comes back with no
// Workload admitted twice. A cluster without the add-on has none of it.
func TestKueueAdmitsQueuesAndRequeues(t *testing.T) {
	e := newEnv(t)
	e.fails(`addons (--addons): "volcano" is not an add-on kubesim offers; use kueue`,
		"create", "cluster", "--name", "badaddon", "--addons", "volcano")

	e.createCluster("queues", "--addons", "kueue", "--nodes", "1")
	pid := e.componentPID("queues", "kueue")
	if pid == 0 {
		t.Fatal("no kueue process")
	}
	e.apply(queue)
	client := e.client()
	dyn := dynamic.NewForConfigOrDie(mustConfig(t, e.kubeconfig))
	ctx := context.Background()

	// What Kueue's own webhook refuses is refused with its words.
	badCQ := filepath.Join(t.TempDir(), "bad.yaml")
	writeFile(t, badCQ, []byte(`apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: bad}
spec:
  preemption:
    reclaimWithinCohort: Never
    borrowWithinCohort: {policy: LowerPriority}
`))
	if r := e.run("kubectl", "--name", "queues", "apply", "-f", badCQ); r.code == 0 ||
		!strings.Contains(r.stderr, `The ClusterQueue "bad" is invalid: spec.preemption: Invalid value: reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never`) {
		t.Errorf("a ClusterQueue Kueue refuses: want its webhook's message, got %s", r)
	}

	// First-come, first-admitted: each Job is created once the one
	// before it has its Workload.
	for _, j := range []*batchv1.Job{queuedJob("short", "20s"), queuedJob("long", "1h"), queuedJob("third", "1h")} {
		if _, err := client.BatchV1().Jobs("default").Create(ctx, j, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, "a Workload for Job "+j.Name, func() error {
			_, err := workloadOf(ctx, dyn, j.Name)
			return err
		})
	}
	eventually(t, time.Minute, "short and long admitted and Running, third pending on quota", func() error {
		for _, name := range []string{"short", "long"} {
			if pods := runningPods(t, client, "job="+name); len(pods) != 1 {
				return fmt.Errorf("job %s: %d pods Running", name, len(pods))
			}
		}
		third, err := client.BatchV1().Jobs("default").Get(ctx, "third", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !ptr.Deref(third.Spec.Suspend, false) {
			return fmt.Errorf("job third is not suspended")
		}
		w, err := workloadOf(ctx, dyn, "third")
		if err != nil {
			return err
		}
		status, reason, message := workloadCondition(w, "QuotaReserved")
		if status != "False" || !strings.Contains(message, "insufficient unused quota for cpu in flavor default-flavor") {
			return fmt.Errorf("third's QuotaReserved: %s %s %q", status, reason, message)
		}
		return nil
	})

	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "kueue restarted", func() error {
		if p := e.componentPID("queues", "kueue"); p == 0 || p == pid {
			return fmt.Errorf("pid %d", p)
		}
		return nil
	})

	eventually(t, 2*time.Minute, "short finished, third admitted and Running, long still Running", func() error {
		short, err := client.BatchV1().Jobs("default").Get(ctx, "short", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if short.Status.Succeeded != 1 {
			return fmt.Errorf("short: %d succeeded", short.Status.Succeeded)
		}
		for _, name := range []string{"long", "third"} {
			if pods := runningPods(t, client, "job="+name); len(pods) != 1 {
				return fmt.Errorf("job %s: %d pods Running", name, len(pods))
			}
		}
		return nil
	})
	// Never more admitted than the quota holds, nor a Workload twice.
	list, err := dyn.Resource(workloadsGVR).Namespace("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 3 {
		t.Errorf("%d Workloads, want one for each of the 3 Jobs", len(list.Items))
	}
	admitted := 0
	for _, w := range list.Items {
		if s, _, _ := workloadCondition(&w, "Admitted"); s == "True" {
			if f, _, _ := workloadCondition(&w, "Finished"); f != "True" {
				admitted++
			}
		}
	}
	if admitted != 2 {
		t.Errorf("%d unfinished Workloads admitted, want 2 (8 of 10 CPUs)", admitted)
	}

	e.createCluster("plain", "--nodes", "1")
	if pid := e.componentPID("plain", "kueue"); pid != 0 {
		t.Errorf("a cluster without the add-on runs kueue (pid %d)", pid)
	}
	plain := e.client()
	if _, err := plain.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "kueue-mutating-webhook-configuration", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a cluster without the add-on has Kueue's webhooks: %v", err)
	}
	resources, err := plain.Discovery().ServerPreferredResources()
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(resources, func(l *metav1.APIResourceList) bool { return strings.HasPrefix(l.GroupVersion, "kueue.x-k8s.io/") }) {
		t.Error("a cluster without the add-on serves kueue.x-k8s.io")
	}
}

// workloadOf is the Workload of a Job (Kueue names it after the Job).
func workloadOf(ctx context.Context, dyn dynamic.Interface, job string) (*unstructured.Unstructured, error) {
	list, err := dyn.Resource(workloadsGVR).Namespace("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, w := range list.Items {
		for _, o := range w.GetOwnerReferences() {
			if o.Kind == "Job" && o.Name == job {
				return &w, nil
			}
		}
	}
	return nil, fmt.Errorf("no Workload owned by Job %s among %d", job, len(list.Items))
}

// workloadCondition is a Workload's condition of type typ.
func workloadCondition(w *unstructured.Unstructured, typ string) (status, reason, message string) {
	conds, _, _ := unstructured.NestedSlice(w.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			s, _ := m["status"].(string)
			r, _ := m["reason"].(string)
			msg, _ := m["message"].(string)
			return s, r, msg
		}
	}
	return "", "", ""
}
