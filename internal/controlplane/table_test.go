package controlplane

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/component"
	"github.com/kubesim/kubesim/internal/descheduler"
	"github.com/kubesim/kubesim/internal/dpdb"
	"github.com/kubesim/kubesim/internal/kubeletsim"
	"github.com/kubesim/kubesim/internal/usage"
	"github.com/kubesim/kubesim/upstream/recorder"
)

func testCluster() (clusterdir.Dir, *v1alpha1.Cluster) {
	c := &v1alpha1.Cluster{Name: "blue", ClusterSpec: v1alpha1.ClusterSpec{Descheduler: v1alpha1.Descheduler{Profiles: []string{"TopologyAndDuplicates"}}}}
	c.SetDefaults()
	c.Status = &v1alpha1.ClusterStatus{Ports: v1alpha1.Ports{{Component: KubeAPIServer, Port: 6443}, {Component: Etcd, Port: 2379}, {Component: Etcd, Name: etcdPeerPort, Port: 2380}}}
	return clusterdir.For("/home", c.Name), c
}

func find(t *testing.T, name string) component.Component {
	t.Helper()
	for _, comp := range Components() {
		if comp.Name == name {
			return comp
		}
	}
	t.Fatalf("no component %s", name)
	return component.Component{}
}

func TestExtraArgsReplaceOursAndAddTheirs(t *testing.T) {
	d, c := testCluster()
	c.ExtraArgs = map[string][]string{KubeAPIServer: {"--allow-privileged=false", "--feature-gates=Foo=true"}}
	args := CommandLine(find(t, KubeAPIServer), d, c)
	if slices.Contains(args, "--allow-privileged=true") {
		t.Errorf("kubesim's --allow-privileged survives the user's: %v", args)
	}
	for _, want := range []string{"--allow-privileged=false", "--feature-gates=Foo=true", "--secure-port=6443"} {
		if !slices.Contains(args, want) {
			t.Errorf("command line lacks %s: %v", want, args)
		}
	}
	// Another component's command line is untouched.
	if sched := CommandLine(find(t, KubeScheduler), d, c); slices.ContainsFunc(sched, func(a string) bool { return strings.Contains(a, "Foo") }) {
		t.Errorf("the API server's extra args reached the scheduler: %v", sched)
	}
}

// The kubelet simulator advertises the port the egress proxy refuses.
func TestKubeletSimArgsParseBack(t *testing.T) {
	d, c := testCluster()
	args := CommandLine(find(t, kubeletsim.ComponentName), d, c)
	got := kubeletsim.DefaultOptions()
	if err := component.ParseArgs(kubeletsim.ComponentName, &got, args); err != nil {
		t.Fatalf("parsing %v: %v", args, err)
	}
	if got.Kubeconfig != d.ComponentKubeconfig("kubelet-sim") || got.Holder != "kubesim-blue" || !got.ManageAllNodes ||
		got.LeaseRenewInterval != got.LeaseDuration/2 || got.KubeletPort != kubeletsim.DefaultKubeletPort {
		t.Errorf("kubelet-sim parsed %+v from %v", got, args)
	}
}

// Every component's command line parses back into its own options: the
// descheduler's and the dpdb controller's too.
func TestOwnComponentsArgsParseBack(t *testing.T) {
	d, c := testCluster()
	c.Status.Ports.Set(dpdb.ComponentName, "", 9443)
	desch := descheduler.DefaultComponentOptions()
	if err := component.ParseArgs("descheduler", &desch, CommandLine(find(t, descheduler.ComponentName), d, c)); err != nil ||
		desch.Policy != d.DeschedulerPolicy() || desch.Interval != c.Descheduler.Interval.Duration {
		t.Errorf("descheduler parsed %+v (%v)", desch, err)
	}
	dp := dpdb.DefaultOptions()
	if err := component.ParseArgs("dpdb", &dp, CommandLine(find(t, dpdb.ComponentName), d, c)); err != nil ||
		dp.ClusterName != "blue" || dp.WebhookPort != 9443 {
		t.Errorf("dpdb controller parsed %+v (%v)", dp, err)
	}
	var etcd EtcdOptions
	if err := component.ParseArgs(Etcd, &etcd, CommandLine(find(t, Etcd), d, c)); err != nil || etcd.DataDir != d.Etcd() {
		t.Errorf("etcd parsed %+v (%v)", etcd, err)
	}
}

// Each client identity is declared once, by one component.
func TestIdentitiesAreDistinct(t *testing.T) {
	seen := map[string]bool{}
	for _, id := range Identities() {
		if seen[id.File] || seen[id.User] {
			t.Errorf("identity %s (%s) declared twice", id.File, id.User)
		}
		seen[id.File], seen[id.User] = true, true
	}
	if !seen["system:kube-scheduler"] || !seen["kubesim:kubelet-sim"] {
		t.Errorf("identities: %v", seen)
	}
}

func TestEnabledComponents(t *testing.T) {
	_, c := testCluster()
	c.DisableKubeletSim = true
	got := strings.Join(EnabledComponents(c), ",")
	if got != "etcd,kube-apiserver,kube-controller-manager,kube-scheduler,descheduler,dpdb-controller,usage-metrics" {
		t.Errorf("enabled: %s", got)
	}
	c.DisableDPDBController = true
	c.Usage.Disabled = true
	if got := strings.Join(EnabledComponents(c), ","); strings.Contains(got, dpdb.ComponentName) || strings.Contains(got, usage.ComponentName) {
		t.Errorf("enabled with the dpdb controller and usage metrics disabled: %s", got)
	}
}

// Every certificate of pki/ is declared once: a serving certificate named
// as a client identity would overwrite its key pair at create.
func TestCertificateFilesAreDistinct(t *testing.T) {
	seen := map[string]string{}
	claim := func(file, by string) {
		if other, ok := seen[file]; ok {
			t.Errorf("pki/%s.crt is both %s and %s", file, other, by)
		}
		seen[file] = by
	}
	for _, comp := range Components() {
		if comp.Identity != nil {
			claim(comp.Identity.File, comp.Name+"'s identity")
		}
		for _, id := range comp.ClientCerts {
			claim(id.File, comp.Name+"'s client certificate")
		}
		for _, sc := range comp.ServingCerts {
			claim(sc.Name, comp.Name+"'s serving certificate")
		}
	}
}

// Every entry is a process `kubesim component NAME` can run.
func TestEveryEntryHasItsMain(t *testing.T) {
	for _, comp := range Components() {
		if comp.Main == nil {
			t.Errorf("%s has no Main: `kubesim component %s` could not run it", comp.Name, comp.Name)
		}
	}
}

// The recorder's own default, for a scheduler started without
// --explain-pods, is the cluster spec's.
func TestExplainPodsDefault(t *testing.T) {
	if recorder.DefaultPods != int(v1alpha1.DefaultExplainPods) {
		t.Errorf("recorder.DefaultPods = %d, v1alpha1.DefaultExplainPods = %d: keep them one", recorder.DefaultPods, v1alpha1.DefaultExplainPods)
	}
}
