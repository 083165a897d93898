package controlplane

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/membudget"
)

func TestMemorySharesAddUpToTheLimitOfTheComponentsRun(t *testing.T) {
	c := &v1alpha1.Cluster{}
	c.SetDefaults() // 1536Mi; no descheduler
	var sum int64
	for _, name := range EnabledComponents(c) {
		sum += memoryShare(name, c)
	}
	limit := c.MemoryLimit.Value()
	if sum > limit || sum < limit-int64(len(memoryWeights))*100 {
		t.Errorf("shares add up to %d, want the limit %d", sum, limit)
	}
	if api, sched := memoryShare(KubeAPIServer, c), memoryShare(KubeScheduler, c); api != 3*sched {
		t.Errorf("API server share %d, scheduler's %d: want 45:15", api, sched)
	}
}

func TestComponentEnvCarriesTheShareUnlessTheLimitIsZero(t *testing.T) {
	c := &v1alpha1.Cluster{}
	c.SetDefaults()
	has := func(env []string) bool {
		return slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, membudget.EnvVar+"=") })
	}
	if !has(componentEnv(KubeAPIServer, c)) {
		t.Errorf("no %s in the API server's environment with memoryLimit %s", membudget.EnvVar, c.MemoryLimit)
	}
	zero := resource.MustParse("0")
	c.MemoryLimit = &zero
	if has(componentEnv(KubeAPIServer, c)) {
		t.Errorf("%s set with memoryLimit 0", membudget.EnvVar)
	}
}

func TestEtcdAloneCollectsAtUpstreamsGOGC(t *testing.T) {
	c := &v1alpha1.Cluster{}
	c.SetDefaults()
	for _, comp := range Components() {
		want := "GOGC=" + gcPercent
		if comp.Name == Etcd {
			want = "GOGC=" + etcdGCPercent
		}
		env := componentEnv(comp.Name, c)
		gogc := slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return !strings.HasPrefix(kv, "GOGC=") })
		if len(gogc) != 1 || gogc[0] != want {
			t.Errorf("%s runs with %v, want only %s", comp.Name, gogc, want)
		}
	}
}
