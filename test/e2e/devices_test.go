//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// gpuNodes is a Cluster file of 4 nodes with 8 GPUs each.
const gpuNodes = `apiVersion: kubesim.io/v1alpha1
kind: Cluster
nodeGroups:
- name: gpu
  count: 4
  devices:
  - driver: gpu.kubesim.io
    count: 8
    attributes: {model: H100, memory: 80Gi, cores: 132}
`

// twoGPUNodes is a Cluster file of 2 nodes, gpu-0 and gpu-1, with 2 GPUs
// each.
const twoGPUNodes = `apiVersion: kubesim.io/v1alpha1
kind: Cluster
nodeGroups:
- name: gpu
  count: 2
  devices: [{driver: gpu.kubesim.io, count: 2}]
`

// threeGPUJob is a Job of 10 pods, each claiming 3 GPUs through a
// ResourceClaimTemplate, running for an hour.
const threeGPUJob = `apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: three-gpus}
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly: {deviceClassName: gpu.kubesim.io, count: 3}
---
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  completions: 10
  parallelism: 10
  template:
    metadata:
      labels: {app: train}
      annotations: {kubesim.io/run-duration: 1h}
    spec:
      restartPolicy: Never
      resourceClaims: [{name: gpus, resourceClaimTemplateName: three-gpus}]
      containers:
      - name: train
        image: trainer
        resources: {claims: [{name: gpus}]}
`

// TestDevicesPackGPUs: 4 nodes × 8 GPUs and a Job of 10 pods claiming 3
// GPUs each: 8 run (2 a node), 2 wait with the DynamicResources reason; 2
// running pods deleted, the 2 waiting ones run. Every claim is allocated
// once, and released when its pod goes.
func TestDevicesPackGPUs(t *testing.T) {
	e := newEnv(t)
	config := filepath.Join(t.TempDir(), "cluster.yaml")
	writeFile(t, config, []byte(gpuNodes))
	e.createCluster("gpus", "--config", config)
	client := e.client()
	ctx := context.Background()

	// What kubesim published: a pool per node, owned by it, and the class.
	slices, err := client.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(slices.Items) != 4 {
		t.Fatalf("%d ResourceSlices, want one per node", len(slices.Items))
	}
	for _, s := range slices.Items {
		if len(s.Spec.Devices) != 8 || s.Spec.Pool.Name != *s.Spec.NodeName || len(s.OwnerReferences) != 1 || s.OwnerReferences[0].Name != *s.Spec.NodeName {
			t.Errorf("slice %s: %d devices, pool %s, node %s, owners %v", s.Name, len(s.Spec.Devices), s.Spec.Pool.Name, *s.Spec.NodeName, s.OwnerReferences)
		}
		model := s.Spec.Devices[0].Attributes["model"]
		if model.StringValue == nil || *model.StringValue != "H100" || s.Spec.Devices[0].Attributes["cores"].IntValue == nil {
			t.Errorf("slice %s: attributes %v", s.Name, s.Spec.Devices[0].Attributes)
		}
	}
	if _, err := client.ResourceV1().DeviceClasses().Get(ctx, "gpu.kubesim.io", metav1.GetOptions{}); err != nil {
		t.Fatalf("the driver's DeviceClass: %v", err)
	}

	allocations := watchAllocations(t, client)
	e.apply(threeGPUJob)

	var pending []string
	eventually(t, 90*time.Second, "8 pods Running, 2 a node, and 2 Pending for want of devices", func() error {
		running, waiting, err := podsByNode(client, "app=train")
		if err != nil {
			return err
		}
		if n := countRunning(running); n != 8 {
			return fmt.Errorf("%d Running: %v", n, running)
		}
		for node, pods := range running {
			if len(pods) != 2 {
				return fmt.Errorf("node %s runs %d pods, want 2", node, len(pods))
			}
		}
		if len(waiting) != 2 {
			return fmt.Errorf("%d pods Pending", len(waiting))
		}
		for _, p := range waiting {
			if why := unschedulable(&p); !strings.Contains(why, "cannot allocate all claims") {
				return fmt.Errorf("pod %s Pending: %q, want the DynamicResources reason", p.Name, why)
			}
		}
		pending = []string{waiting[0].Name, waiting[1].Name}
		return nil
	})
	if out := e.must("explain", "--name", "gpus", "pod", pending[0]).stdout; !strings.Contains(out, "DynamicResources: cannot allocate all claims") {
		t.Errorf("explain names no DynamicResources reason:\n%s", out)
	}
	checkNoDeviceTwice(t, client)

	// Two running pods go: their claims are released, the waiting pods run.
	running, _, err := podsByNode(client, "app=train")
	if err != nil {
		t.Fatal(err)
	}
	var gone []corev1.Pod
	for _, pods := range running {
		gone = append(gone, pods[0])
		if len(gone) == 2 {
			break
		}
	}
	for _, p := range gone {
		if err := client.CoreV1().Pods("default").Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 90*time.Second, "the pods that waited Running", func() error {
		for _, name := range pending {
			p, err := client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if p.Status.Phase != corev1.PodRunning {
				return fmt.Errorf("pod %s is %s (%s)", name, p.Status.Phase, unschedulable(p))
			}
		}
		return nil
	})
	eventually(t, 60*time.Second, "the deleted pods' claims released", func() error {
		claims, err := client.ResourceV1().ResourceClaims("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, c := range claims.Items {
			for _, r := range c.Status.ReservedFor {
				if r.UID == gone[0].UID || r.UID == gone[1].UID {
					return fmt.Errorf("claim %s still reserved for deleted pod %s", c.Name, r.Name)
				}
			}
		}
		return nil
	})
	checkNoDeviceTwice(t, client)
	for claim, n := range allocations.counts() {
		if n != 1 {
			t.Errorf("claim %s was allocated %d times, want once", claim, n)
		}
	}
	if n := len(allocations.counts()); n < 10 {
		t.Errorf("%d claims allocated, want at least 10", n)
	}
}

// TestDevicesClassSelectsModel: a DeviceClass whose CEL selector names a
// model, over a pool of H100 and A100 nodes, places pods on H100 nodes only.
func TestDevicesClassSelectsModel(t *testing.T) {
	e := newEnv(t)
	config := filepath.Join(t.TempDir(), "cluster.yaml")
	writeFile(t, config, []byte(`apiVersion: kubesim.io/v1alpha1
kind: Cluster
nodeGroups:
- name: h100
  count: 2
  devices: [{driver: gpu.kubesim.io, count: 4, attributes: {model: H100}}]
- name: a100
  count: 3
  devices: [{driver: gpu.kubesim.io, count: 4, attributes: {model: A100}}]
`))
	e.createCluster("models", "--config", config)
	client := e.client()
	e.apply(`apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: h100}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.kubesim.io" && device.attributes["gpu.kubesim.io"].model == "H100"'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-h100}
spec:
  spec:
    devices:
      requests: [{name: gpu, exactly: {deviceClassName: h100}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: infer}
spec:
  replicas: 6
  selector: {matchLabels: {app: infer}}
  template:
    metadata: {labels: {app: infer}}
    spec:
      resourceClaims: [{name: gpu, resourceClaimTemplateName: one-h100}]
      containers: [{name: infer, image: server, resources: {claims: [{name: gpu}]}}]
`)
	eventually(t, 90*time.Second, "6 pods Running on H100 nodes only", func() error {
		running, waiting, err := podsByNode(client, "app=infer")
		if err != nil {
			return err
		}
		if n := countRunning(running); n != 6 || len(waiting) > 0 {
			return fmt.Errorf("%d Running, %d Pending", n, len(waiting))
		}
		for node := range running {
			if !strings.HasPrefix(node, "h100-") {
				return fmt.Errorf("a pod runs on %s", node)
			}
		}
		return nil
	})
	// A claim naming a class that does not exist: upstream's reason, and
	// explain shows it.
	e.apply(`apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: no-class}
spec:
  devices:
    requests: [{name: gpu, exactly: {deviceClassName: b200}}]
---
apiVersion: v1
kind: Pod
metadata: {name: no-class}
spec:
  resourceClaims: [{name: gpu, resourceClaimName: no-class}]
  containers: [{name: c, image: x, resources: {claims: [{name: gpu}]}}]
`)
	eventually(t, 30*time.Second, "the pod of a claim naming no class Pending with the reason", func() error {
		p, err := client.CoreV1().Pods("default").Get(context.Background(), "no-class", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if why := unschedulable(p); !strings.Contains(why, "b200") {
			return fmt.Errorf("%s: %q", p.Status.Phase, why)
		}
		return nil
	})
	out := e.must("explain", "--name", "models", "pod", "no-class").stdout
	if !strings.Contains(out, "b200") {
		t.Errorf("explain does not name the missing class:\n%s", out)
	}
	t.Logf("explain of a claim naming no class:\n%s", out)
	// Two more than the H100s hold wait, though the A100s are free.
	e.kubectl("scale", "deployment", "infer", "--replicas", "10")
	eventually(t, 60*time.Second, "8 Running and 2 Pending", func() error {
		running, waiting, err := podsByNode(client, "app=infer")
		if err != nil {
			return err
		}
		if n := countRunning(running); n != 8 || len(waiting) != 2 {
			return fmt.Errorf("%d Running, %d Pending", n, len(waiting))
		}
		for node := range running {
			if !strings.HasPrefix(node, "h100-") {
				return fmt.Errorf("a pod runs on %s", node)
			}
		}
		return nil
	})
}

// TestDevicesPartitions: a GPU offered whole and as 7 parts sharing its
// counters: 7 one-part pods run and an 8th waits; a whole-GPU pod does not
// fit beside a part, and runs once the parts are free.
func TestDevicesPartitions(t *testing.T) {
	e := newEnv(t)
	config := filepath.Join(t.TempDir(), "cluster.yaml")
	writeFile(t, config, []byte(`apiVersion: kubesim.io/v1alpha1
kind: Cluster
nodeGroups:
- name: mig
  count: 1
  devices: [{driver: gpu.kubesim.io, count: 1, partitions: 7, attributes: {model: H100}, capacity: {memory: 80Gi}}]
`))
	e.createCluster("parts", "--config", config)
	client := e.client()
	ctx := context.Background()
	e.apply(`apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-part}
spec:
  spec:
    devices:
      requests:
      - name: part
        exactly:
          deviceClassName: gpu.kubesim.io
          selectors: [{cel: {expression: 'device.attributes["gpu.kubesim.io"].partition'}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: parts}
spec:
  replicas: 8
  selector: {matchLabels: {app: parts}}
  template:
    metadata: {labels: {app: parts}}
    spec:
      resourceClaims: [{name: part, resourceClaimTemplateName: one-part}]
      containers: [{name: c, image: x, resources: {claims: [{name: part}]}}]
`)
	eventually(t, 90*time.Second, "7 one-part pods Running, the 8th Pending", func() error {
		running, waiting, err := podsByNode(client, "app=parts")
		if err != nil {
			return err
		}
		if n := countRunning(running); n != 7 || len(waiting) != 1 {
			return fmt.Errorf("%d Running, %d Pending", n, len(waiting))
		}
		if why := unschedulable(&waiting[0]); !strings.Contains(why, "cannot allocate all claims") {
			return fmt.Errorf("the 8th waits for %q", why)
		}
		return nil
	})
	e.kubectl("scale", "deployment", "parts", "--replicas", "1")
	e.apply(`apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: whole}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.kubesim.io
        selectors: [{cel: {expression: '!device.attributes["gpu.kubesim.io"].partition'}}]
---
apiVersion: v1
kind: Pod
metadata: {name: whole}
spec:
  resourceClaims: [{name: gpu, resourceClaimName: whole}]
  containers: [{name: c, image: x, resources: {claims: [{name: gpu}]}}]
`)
	eventually(t, 60*time.Second, "one part in use and the whole GPU's pod Pending", func() error {
		running, _, err := podsByNode(client, "app=parts")
		if err != nil {
			return err
		}
		p, err := client.CoreV1().Pods("default").Get(ctx, "whole", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if n := countRunning(running); n != 1 || p.Status.Phase != corev1.PodPending || !strings.Contains(unschedulable(p), "cannot allocate all claims") {
			return fmt.Errorf("%d parts Running; whole: %s %q", n, p.Status.Phase, unschedulable(p))
		}
		return nil
	})
	e.kubectl("scale", "deployment", "parts", "--replicas", "0")
	waitPhase(t, client, "whole", corev1.PodRunning)
	claim, err := client.ResourceV1().ResourceClaims("default").Get(ctx, "whole", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := claim.Status.Allocation.Devices.Results; len(r) != 1 || r[0].Device != "gpu-0" {
		t.Errorf("the whole GPU's claim got %+v, want gpu-0", r)
	}
}

// TestDevicesTaintEvicts: a NoExecute taint on one node's GPUs (as their
// driver would publish it) has upstream's device-taint-eviction controller
// evict the pods using them; their replacements run on the other node.
func TestDevicesTaintEvicts(t *testing.T) {
	e := newEnv(t)
	config := filepath.Join(t.TempDir(), "cluster.yaml")
	writeFile(t, config, []byte(`apiVersion: kubesim.io/v1alpha1
kind: Cluster
nodeGroups:
- name: gpu
  count: 2
  devices: [{driver: gpu.kubesim.io, count: 4}]
`))
	e.createCluster("taints", "--config", config)
	client := e.client()
	ctx := context.Background()
	e.apply(gpuDeployment("web", "c", "x", 4))
	var before map[string][]corev1.Pod
	eventually(t, 90*time.Second, "4 pods Running on both nodes", func() error {
		running, waiting, err := podsByNode(client, "app=web")
		if err != nil {
			return err
		}
		if n := countRunning(running); n != 4 || len(waiting) > 0 {
			return fmt.Errorf("%d Running, %d Pending", n, len(waiting))
		}
		if len(running["gpu-0"]) == 0 || len(running["gpu-1"]) == 0 {
			return fmt.Errorf("not on both nodes: %v", running)
		}
		before = running
		return nil
	})
	slice, err := client.ResourceV1().ResourceSlices().Get(ctx, "gpu-0-gpu.kubesim.io-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range slice.Spec.Devices {
		slice.Spec.Devices[i].Taints = []resourcev1.DeviceTaint{{Key: "gpu.kubesim.io/xid-error", Value: "79", Effect: resourcev1.DeviceTaintEffectNoExecute}}
	}
	if _, err := client.ResourceV1().ResourceSlices().Update(ctx, slice, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	evicted := before["gpu-0"]
	eventually(t, 90*time.Second, "gpu-0's pods evicted and all 4 Running on gpu-1", func() error {
		running, waiting, err := podsByNode(client, "app=web")
		if err != nil {
			return err
		}
		if len(running["gpu-0"]) > 0 || len(running["gpu-1"]) != 4 || len(waiting) > 0 {
			return fmt.Errorf("gpu-0 runs %d, gpu-1 %d, %d Pending", len(running["gpu-0"]), len(running["gpu-1"]), len(waiting))
		}
		for _, p := range evicted {
			if _, err := client.CoreV1().Pods("default").Get(ctx, p.Name, metav1.GetOptions{}); err == nil {
				return fmt.Errorf("pod %s is still there", p.Name)
			}
		}
		return nil
	})
}

// TestDevicesKubelet: the simulated kubelet starts no pod whose claim is
// not reserved for it, and sets the binding conditions a slice declares,
// as a driver would, so the pod leaves PreBind and runs.
func TestDevicesKubelet(t *testing.T) {
	e := newEnv(t)
	config := filepath.Join(t.TempDir(), "cluster.yaml")
	writeFile(t, config, []byte(`apiVersion: kubesim.io/v1alpha1
kind: Cluster
nodeGroups:
- name: gpu
  count: 1
  devices: [{driver: gpu.kubesim.io, count: 2}]
- name: fpga
  count: 1
  devices: [{driver: fpga.kubesim.io, count: 1, bindingConditions: [Attached], bindingFailureConditions: [AttachFailed]}]
`))
	e.createCluster("kubelet", "--config", config)
	client := e.client()
	ctx := context.Background()
	e.apply(`apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: direct}
spec:
  devices:
    requests: [{name: gpu, exactly: {deviceClassName: gpu.kubesim.io}}]
---
apiVersion: v1
kind: Pod
metadata: {name: direct}
spec:
  nodeName: gpu-0
  resourceClaims: [{name: gpu, resourceClaimName: direct}]
  containers: [{name: c, image: x, resources: {claims: [{name: gpu}]}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: fpga}
spec:
  devices:
    requests: [{name: fpga, exactly: {deviceClassName: fpga.kubesim.io}}]
---
apiVersion: v1
kind: Pod
metadata: {name: fpga}
spec:
  resourceClaims: [{name: fpga, resourceClaimName: fpga}]
  containers: [{name: c, image: x, resources: {claims: [{name: fpga}]}}]
`)
	waitEvent(t, client, "default", "direct", "FailedPrepareDynamicResources", "ResourceClaim direct (pod claim gpu) is not reserved for the pod")
	waitPhase(t, client, "fpga", corev1.PodRunning)
	claim, err := client.ResourceV1().ResourceClaims("default").Get(ctx, "fpga", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := claim.Status.Devices; len(d) != 1 || d[0].Device != "fpga-0" || len(d[0].Conditions) != 1 ||
		d[0].Conditions[0].Type != "Attached" || d[0].Conditions[0].Status != metav1.ConditionTrue {
		t.Errorf("the claim's device status: %+v", d)
	}
	// Still held: nothing reserved the claim for it.
	if p := getPod(t, client, "direct"); p.Status.Phase != corev1.PodPending {
		t.Errorf("pod direct is %s, want Pending", p.Status.Phase)
	}
}

// TestDevicesWithdrawn: a stopped node's slices stay, as a dead kubelet's
// do, unless node stop is asked to withdraw them; node start publishes them
// again.
func TestDevicesWithdrawn(t *testing.T) {
	e := newEnv(t)
	config := filepath.Join(t.TempDir(), "cluster.yaml")
	writeFile(t, config, []byte("apiVersion: kubesim.io/v1alpha1\nkind: Cluster\nnodeGroups:\n- name: gpu\n  count: 2\n  devices: [{driver: gpu.kubesim.io, count: 2}]\n"))
	e.createCluster("withdraw", "--config", config)
	client := e.client()
	pools := func() string {
		t.Helper()
		list, err := client.ResourceV1().ResourceSlices().List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range list.Items {
			out = append(out, s.Spec.Pool.Name)
		}
		sort.Strings(out)
		return strings.Join(out, " ")
	}
	e.must("node", "stop", "--name", "withdraw", "gpu-1")
	if got := pools(); got != "gpu-0 gpu-1" {
		t.Errorf("after node stop: pools %q, want both", got)
	}
	e.must("node", "start", "--name", "withdraw", "gpu-1")
	if out := e.must("node", "stop", "--name", "withdraw", "--withdraw-devices", "gpu-1").stdout; !strings.Contains(out, "withdrew its devices (1 ResourceSlices deleted)") {
		t.Errorf("node stop --withdraw-devices said: %s", out)
	}
	if got := pools(); got != "gpu-0" {
		t.Errorf("after node stop --withdraw-devices: pools %q, want gpu-0 only", got)
	}
	e.must("node", "start", "--name", "withdraw", "gpu-1")
	if got := pools(); got != "gpu-0 gpu-1" {
		t.Errorf("after node start: pools %q, want both again", got)
	}
}

// TestDevicesBadInput: kubesim's own input is checked before anything is
// made, in one line naming the field.
func TestDevicesBadInput(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	for _, tc := range []struct{ devices, want string }{
		{`[{driver: GPU_Driver, count: 1}]`, `nodeGroups[0].devices[0].driver: "GPU_Driver" is not a driver name`},
		{`[{driver: gpu.kubesim.io, count: 1, attributes: {clock: 1.5}}]`, "nodeGroups[0].devices[0].attributes.clock: 1.5 is not a whole number"},
		{`[{driver: gpu.kubesim.io, count: 1, attributes: {` + strings.Repeat("x", 33) + `: "a"}}]`, "nodeGroups[0].devices[0].attributes: \"xxxx"},
		{`[{driver: gpu.kubesim.io, count: 1, attributes: {model: "` + strings.Repeat("m", 65) + `"}}]`, "nodeGroups[0].devices[0].attributes.model: 65 characters; DRA takes at most 64"},
		{`[{driver: gpu.kubesim.io, count: -1}]`, "nodeGroups[0].devices[0].count: must be between 0 and 8192"},
	} {
		config := filepath.Join(dir, "bad.yaml")
		writeFile(t, config, []byte("apiVersion: kubesim.io/v1alpha1\nkind: Cluster\nnodeGroups:\n- name: gpu\n  count: 1\n  devices: "+tc.devices+"\n"))
		e.fails(tc.want, "create", "cluster", "--name", "bad", "--config", config)
	}
	// More devices than a slice holds: several slices of one pool.
	config := filepath.Join(dir, "many.yaml")
	writeFile(t, config, []byte("apiVersion: kubesim.io/v1alpha1\nkind: Cluster\nnodeGroups:\n- name: big\n  count: 1\n  devices: [{driver: gpu.kubesim.io, count: 300}]\n"))
	e.createCluster("many", "--config", config)
	list, err := e.client().ResourceV1().ResourceSlices().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, s := range list.Items {
		total += len(s.Spec.Devices)
		if s.Spec.Pool.ResourceSliceCount != 3 || s.Spec.Pool.Name != "big-0" {
			t.Errorf("slice %s: pool %+v", s.Name, s.Spec.Pool)
		}
	}
	if len(list.Items) != 3 || total != 300 {
		t.Errorf("%d slices holding %d devices, want 3 holding 300", len(list.Items), total)
	}
}

// podsByNode lists the pods of selector: the Running ones by node, and the
// Pending ones.
func podsByNode(client kubernetes.Interface, selector string) (map[string][]corev1.Pod, []corev1.Pod, error) {
	pods, err := client.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, nil, err
	}
	running := map[string][]corev1.Pod{}
	var pending []corev1.Pod
	for _, p := range pods.Items {
		switch {
		case p.DeletionTimestamp != nil:
		case p.Status.Phase == corev1.PodRunning:
			running[p.Spec.NodeName] = append(running[p.Spec.NodeName], p)
		case p.Status.Phase == corev1.PodPending:
			pending = append(pending, p)
		}
	}
	return running, pending, nil
}

func countRunning(byNode map[string][]corev1.Pod) int {
	n := 0
	for _, pods := range byNode {
		n += len(pods)
	}
	return n
}

// unschedulable is the scheduler's message on a pod it could not place.
func unschedulable(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return c.Message
		}
	}
	return ""
}

// checkNoDeviceTwice fails if two allocated claims hold one device.
func checkNoDeviceTwice(t *testing.T, client kubernetes.Interface) {
	t.Helper()
	claims, err := client.ResourceV1().ResourceClaims("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	held := map[string]string{}
	for _, c := range claims.Items {
		if c.Status.Allocation == nil {
			continue
		}
		for _, r := range c.Status.Allocation.Devices.Results {
			key := r.Driver + "/" + r.Pool + "/" + r.Device
			if other, ok := held[key]; ok {
				t.Errorf("device %s allocated to claims %s and %s", key, other, c.Name)
			}
			held[key] = c.Name
		}
	}
}

// allocations counts, per claim, how often it went from unallocated to
// allocated.
type allocations struct {
	mu sync.Mutex
	n  map[types.UID]int
	by map[types.UID]string
}

func watchAllocations(t *testing.T, client kubernetes.Interface) *allocations {
	a := &allocations{n: map[types.UID]int{}, by: map[types.UID]string{}}
	factory := informers.NewSharedInformerFactory(client, 0)
	informer := factory.Resource().V1().ResourceClaims().Informer()
	count := func(old, obj any) {
		claim, ok := obj.(*resourcev1.ResourceClaim)
		if !ok || claim.Status.Allocation == nil {
			return
		}
		if before, ok := old.(*resourcev1.ResourceClaim); ok && before.Status.Allocation != nil {
			return
		}
		a.mu.Lock()
		a.n[claim.UID]++
		a.by[claim.UID] = claim.Name
		a.mu.Unlock()
	}
	_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { count(nil, obj) },
		UpdateFunc: count,
	})
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop); factory.Shutdown() })
	factory.Start(stop)
	if !cache.WaitForCacheSync(stop, informer.HasSynced) {
		t.Fatal("claims informer did not sync")
	}
	return a
}

func (a *allocations) counts() map[string]int {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string]int{}
	for uid, n := range a.n {
		out[a.by[uid]+" ("+string(uid)+")"] = n
	}
	return out
}

// gpuDeployment is a ResourceClaimTemplate one-gpu (one device of class
// gpu.kubesim.io) and a Deployment app of replicas pods, each with a claim
// made from it.
func gpuDeployment(app, container, image string, replicas int) string {
	return fmt.Sprintf(`apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec:
  spec:
    devices:
      requests: [{name: gpu, exactly: {deviceClassName: gpu.kubesim.io}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s}
spec:
  replicas: %[4]d
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec:
      resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
      containers: [{name: %[2]s, image: %[3]s, resources: {claims: [{name: gpu}]}}]
`, app, container, image, replicas)
}
