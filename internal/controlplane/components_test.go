package controlplane

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/kubeletsim"
)

func testCluster() (clusterdir.Dir, *v1alpha1.Cluster) {
	c := &v1alpha1.Cluster{Name: "blue", Descheduler: v1alpha1.Descheduler{Profiles: []string{"TopologyAndDuplicates"}}}
	c.SetDefaults()
	c.Status = &v1alpha1.ClusterStatus{Ports: v1alpha1.Ports{APIServer: 6443, Etcd: 2379, EtcdPeer: 2380}}
	return clusterdir.For("/home", c.Name), c
}

func component(t *testing.T, name string) Component {
	t.Helper()
	for _, comp := range Components() {
		if comp.Name == name {
			return comp
		}
	}
	t.Fatalf("no component %s", name)
	return Component{}
}

func TestExtraArgsReplaceOursAndAddTheirs(t *testing.T) {
	d, c := testCluster()
	c.ExtraArgs = map[string][]string{KubeAPIServer: {"--allow-privileged=false", "--feature-gates=Foo=true"}}
	args := commandLine(component(t, KubeAPIServer), d, c)
	if slices.Contains(args, "--allow-privileged=true") {
		t.Errorf("kubesim's --allow-privileged survives the user's: %v", args)
	}
	for _, want := range []string{"--allow-privileged=false", "--feature-gates=Foo=true", "--secure-port=6443"} {
		if !slices.Contains(args, want) {
			t.Errorf("command line lacks %s: %v", want, args)
		}
	}
	// Another component's command line is untouched.
	if sched := commandLine(component(t, KubeScheduler), d, c); slices.ContainsFunc(sched, func(a string) bool { return strings.Contains(a, "Foo") }) {
		t.Errorf("the API server's extra args reached the scheduler: %v", sched)
	}
}

// The kubelet simulator advertises the port the egress proxy refuses.
func TestKubeletSimArgsParseBack(t *testing.T) {
	d, c := testCluster()
	args := commandLine(component(t, KubeletSim), d, c)
	got := kubeletsim.DefaultOptions()
	if err := ParseArgs(KubeletSim, &got, args); err != nil {
		t.Fatalf("parsing %v: %v", args, err)
	}
	want := kubeletSimOptions(d, c)
	if got.Kubeconfig != want.Kubeconfig || got.Holder != "kubesim-blue" || !got.ManageAllNodes ||
		got.LeaseRenewInterval != got.LeaseDuration/2 || got.KubeletPort != kubeletsim.DefaultKubeletPort {
		t.Errorf("kubelet-sim parsed %+v from %v", got, args)
	}
}

func TestEnabledComponents(t *testing.T) {
	_, c := testCluster()
	c.DisableKubeletSim = true
	got := strings.Join(EnabledComponents(c), ",")
	if got != "etcd,kube-apiserver,kube-controller-manager,kube-scheduler,descheduler,dpdb-controller" {
		t.Errorf("enabled: %s", got)
	}
	c.DisableDPDBController = true
	if got := strings.Join(EnabledComponents(c), ","); strings.Contains(got, DPDBController) {
		t.Errorf("enabled with the dpdb controller disabled: %s", got)
	}
}
