package supervisor

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/component"
	"github.com/kubesim/kubesim/internal/controlplane"
	"github.com/kubesim/kubesim/upstream/membudget"
)

func find(t *testing.T, name string) component.Component {
	t.Helper()
	for _, comp := range controlplane.Components() {
		if comp.Name == name {
			return comp
		}
	}
	t.Fatalf("no component %s", name)
	return component.Component{}
}

func TestMemorySharesAddUpToTheLimitOfTheComponentsRun(t *testing.T) {
	c := &v1alpha1.Cluster{}
	c.SetDefaults() // 1536Mi; no descheduler
	all := controlplane.Components()
	var sum int64
	for _, comp := range all {
		if comp.IsEnabled(c) {
			sum += memoryShare(comp, all, c)
		}
	}
	limit := c.MemoryLimit.Value()
	if sum > limit || sum < limit-int64(len(all))*100 {
		t.Errorf("shares add up to %d, want the limit %d", sum, limit)
	}
	api, sched := memoryShare(find(t, controlplane.KubeAPIServer), all, c), memoryShare(find(t, controlplane.KubeScheduler), all, c)
	if api != 3*sched {
		t.Errorf("API server share %d, scheduler's %d: want 45:15", api, sched)
	}
}

func TestComponentEnvCarriesTheShareUnlessTheLimitIsZero(t *testing.T) {
	c := &v1alpha1.Cluster{}
	c.SetDefaults()
	has := func(env []string) bool {
		return slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, membudget.EnvVar+"=") })
	}
	api, all := find(t, controlplane.KubeAPIServer), controlplane.Components()
	if !has(componentEnv(api, all, c)) {
		t.Errorf("no %s in the API server's environment with memoryLimit %s", membudget.EnvVar, c.MemoryLimit)
	}
	zero := resource.MustParse("0")
	c.MemoryLimit = &zero
	if has(componentEnv(api, all, c)) {
		t.Errorf("%s set with memoryLimit 0", membudget.EnvVar)
	}
}

func TestEtcdAloneCollectsAtUpstreamsGOGC(t *testing.T) {
	c := &v1alpha1.Cluster{}
	c.SetDefaults()
	all := controlplane.Components()
	for _, comp := range all {
		want := "GOGC=" + gcPercent
		if comp.Name == controlplane.Etcd {
			want = "GOGC=100"
		}
		env := componentEnv(comp, all, c)
		gogc := slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return !strings.HasPrefix(kv, "GOGC=") })
		if len(gogc) != 1 || gogc[0] != want {
			t.Errorf("%s runs with %v, want only %s", comp.Name, gogc, want)
		}
	}
}
