package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/kueue"
)

// KueueOptions say how many Jobs the kueue benchmark sends through one
// ClusterQueue, and how long it watches Kueue idle first.
type KueueOptions struct {
	Home     string
	Jobs     int           // Jobs of one pod of 1 CPU
	Quota    int           // the ClusterQueue's CPUs: Jobs admitted at once
	RunFor   time.Duration // each pod's kubesim.io/run-duration
	Idle     time.Duration // the window Kueue is watched idle in
	Out, Log io.Writer
}

// kueueNodes hold the quota: 32 CPUs each (the default node), so the
// ClusterQueue, not the nodes, is what makes Jobs wait.
func kueueNodes(quota int) int { return (quota + 31) / 32 }

// Kueue measures the kueue add-on: the cluster at rest with it (and
// nothing queued) for o.Idle, then o.Jobs Jobs submitted at once to one
// ClusterQueue of o.Quota CPUs, until every one has completed.
func Kueue(ctx context.Context, o KueueOptions) error {
	cfg := &v1alpha1.Cluster{Name: fmt.Sprintf("bench-%d-kueue", os.Getpid()), Nodes: kueueNodes(o.Quota)}
	cfg.Addons = []string{v1alpha1.AddonKueue}
	c, err := NewCluster(ctx, o.Home, cfg, io.Discard)
	if err != nil {
		return err
	}
	defer c.Delete(context.Background())
	rc, err := c.p.RESTConfig(c.Name)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Log, "kueue: at rest for %s\n", o.Idle)
	idle, err := c.Measure(fmt.Sprintf("at rest with Kueue, %s", o.Idle), 0, func() error {
		select { // the window measured, not a wait for something
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(o.Idle):
			return nil
		}
	})
	if err != nil {
		return err
	}
	for _, obj := range kueueQueue(o.Quota) {
		gvr := schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: strings.ToLower(obj.GetKind()) + "s"}
		if _, err := dyn.Resource(gvr).Namespace(obj.GetNamespace()).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("%s: %w", obj.GetKind(), err)
		}
	}
	fmt.Fprintf(o.Log, "kueue: %d Jobs through a ClusterQueue of %d CPUs\n", o.Jobs, o.Quota)
	jobs, err := c.Measure(fmt.Sprintf("%d Jobs of 1 CPU, %s each, through a queue of %d CPUs, until all completed", o.Jobs, o.RunFor, o.Quota), o.Jobs, func() error {
		for i := range o.Jobs {
			if _, err := c.Client.BatchV1().Jobs(Namespace).Create(ctx, kueueJob(i, o.RunFor), metav1.CreateOptions{}); err != nil {
				return err
			}
		}
		return waitJobsComplete(ctx, c, o.Jobs, time.Duration(o.Jobs/o.Quota+1)*o.RunFor*2+5*time.Minute)
	})
	if err != nil {
		return err
	}
	Report(o.Out, []Phase{idle, jobs}, nil)
	fmt.Fprintf(o.Out, "Kueue: %.2f CPU-s a minute at rest (%dMi RSS); %s of the cluster's CPU while the Jobs passed (%dMi RSS, %dMi peak)\n",
		idle.CPU[kueue.ComponentName].Seconds()/o.Idle.Minutes(), idle.RSS[kueue.ComponentName]>>20,
		share(jobs.CPU[kueue.ComponentName], total(jobs.CPU)), jobs.RSS[kueue.ComponentName]>>20, jobs.Peak[kueue.ComponentName]>>20)
	return nil
}

// kueueQueue is one flavor, a ClusterQueue of quota CPUs and its
// LocalQueue in the benchmark's namespace.
func kueueQueue(quota int) []*unstructured.Unstructured {
	obj := func(kind, ns, name string, spec map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": kind, "metadata": map[string]any{"name": name}}}
		if ns != "" {
			u.SetNamespace(ns)
		}
		if spec != nil {
			u.Object["spec"] = spec
		}
		return u
	}
	return []*unstructured.Unstructured{
		obj("ResourceFlavor", "", "bench", nil),
		obj("ClusterQueue", "", "bench", map[string]any{
			"namespaceSelector": map[string]any{},
			"resourceGroups": []any{map[string]any{"coveredResources": []any{"cpu"}, "flavors": []any{map[string]any{
				"name": "bench", "resources": []any{map[string]any{"name": "cpu", "nominalQuota": fmt.Sprint(quota)}}}}}},
		}),
		obj("LocalQueue", Namespace, "bench", map[string]any{"clusterQueue": "bench"}),
	}
}

func kueueJob(i int, runFor time.Duration) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("job-%05d", i), Labels: map[string]string{"kueue.x-k8s.io/queue-name": "bench"}},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"kubesim.io/run-duration": runFor.String()}},
				Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "bench",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}},
			},
		},
	}
}

// waitJobsComplete waits until n Jobs of the namespace have completed.
func waitJobsComplete(ctx context.Context, c *Cluster, n int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		list, err := c.Client.BatchV1().Jobs(Namespace).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		done := 0
		if err == nil {
			for _, j := range list.Items {
				if j.Status.Succeeded > 0 {
					done++
				}
			}
		}
		if done >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d Jobs completed after %s (%v)", done, n, timeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}
