package scenario

import (
	"slices"
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/kubesim/kubesim/internal/scenario/result"
)

// queueSamples records every ClusterQueue of a cluster running Kueue as
// Kueue updates its status: the report charts its pending and admitted
// Workloads and the quota they use over time.
type queueSamples struct {
	mu     sync.Mutex
	series map[string]*queueSeries // by name
}

type queueSeries struct {
	result.Queue
	times []time.Time
}

func (q *queueSamples) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { q.record(obj) },
		UpdateFunc: func(_, obj any) { q.record(obj) },
	}
}

func (q *queueSamples) record(obj any) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	cq := &kueuev1beta2.ClusterQueue{}
	if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, cq) != nil {
		return
	}
	// The quotas, in the order the ClusterQueue lists them.
	var quotas []result.QueueQuota
	for _, g := range cq.Spec.ResourceGroups {
		for _, f := range g.Flavors {
			for _, r := range f.Resources {
				quotas = append(quotas, result.QueueQuota{Flavor: string(f.Name), Resource: string(r.Name), Nominal: r.NominalQuota.AsApproximateFloat64()})
			}
		}
	}
	used := make([]float64, len(quotas))
	for _, f := range cq.Status.FlavorsUsage {
		for _, r := range f.Resources {
			for i, qu := range quotas {
				if qu.Flavor == string(f.Name) && qu.Resource == string(r.Name) {
					used[i] = r.Total.AsApproximateFloat64()
				}
			}
		}
	}
	s := result.QueueSample{Pending: cq.Status.PendingWorkloads, Admitted: cq.Status.AdmittedWorkloads, Used: used}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.series == nil {
		q.series = map[string]*queueSeries{}
	}
	x := q.series[cq.Name]
	if x == nil {
		x = &queueSeries{Queue: result.Queue{Name: cq.Name}}
		q.series[cq.Name] = x
	}
	x.Cohort, x.Quotas = string(cq.Spec.CohortName), quotas
	if n := len(x.Samples); n > 0 && sameQueueSample(x.Samples[n-1], s) {
		return // a status change the chart does not show
	}
	x.Samples = append(x.Samples, s)
	x.times = append(x.times, time.Now())
}

func sameQueueSample(a, b result.QueueSample) bool {
	return a.Pending == b.Pending && a.Admitted == b.Admitted && slices.Equal(a.Used, b.Used)
}

// queues are the series recorded, by name, their times since began.
func (q *queueSamples) queues(cluster string, began time.Time) []*result.Queue {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []*result.Queue
	for _, x := range q.series {
		c := x.Queue
		c.Cluster = cluster
		c.Samples = append([]result.QueueSample(nil), x.Samples...)
		for i := range c.Samples {
			c.Samples[i].At = x.times[i].Sub(began)
		}
		out = append(out, &c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
