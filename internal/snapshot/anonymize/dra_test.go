package anonymize

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
)

// Dynamic resource allocation: an allocated claim's pool, device class,
// node and consumer still name the slice, class, node and pod.
func TestResourceClaims(t *testing.T) {
	objs := decode(t, strings.NewReader(`
apiVersion: v1
kind: Node
metadata: {name: gpu-node-acme-1}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: acme-gpu}
spec: {selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: gpu-node-acme-1-gpu.example.com-x2v9k}
spec:
  driver: gpu.example.com
  nodeName: gpu-node-acme-1
  pool: {name: gpu-node-acme-1, generation: 1, resourceSliceCount: 1}
  devices: [{name: gpu-0}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: acme-trainer-gpu, namespace: acme-ml}
spec:
  devices:
    requests: [{name: gpu, exactly: {deviceClassName: acme-gpu}}]
status:
  allocation:
    devices:
      results: [{request: gpu, driver: gpu.example.com, pool: gpu-node-acme-1, device: gpu-0}]
    nodeSelector:
      nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [gpu-node-acme-1]}]}]
  reservedFor: [{resource: pods, name: acme-trainer, uid: 00000000-0000-4000-8000-000000000001}]
---
apiVersion: v1
kind: Pod
metadata: {name: acme-trainer, namespace: acme-ml}
spec:
  nodeName: gpu-node-acme-1
  resourceClaims: [{name: gpu, resourceClaimName: acme-trainer-gpu}]
  containers: [{name: trainer, image: acme/trainer:v1, resources: {claims: [{name: gpu}]}}]
`))
	sum, err := New(testKey).Objects(objs)
	if err != nil {
		t.Fatal(err)
	}
	if text := dump(t, objs); strings.Contains(text, "acme") {
		t.Errorf("a source name left:\n%s", text)
	}
	node := typed[corev1.Node](t, objs[0])
	class := typed[resourcev1.DeviceClass](t, objs[1])
	slice := typed[resourcev1.ResourceSlice](t, objs[2])
	claim := typed[resourcev1.ResourceClaim](t, objs[3])
	pod := typed[corev1.Pod](t, objs[4])
	result := claim.Status.Allocation.Devices.Results[0]
	switch {
	case *slice.Spec.NodeName != node.Name || slice.Spec.Pool.Name != node.Name || slice.Spec.Driver != "gpu.example.com":
		t.Errorf("slice %+v on node %s", slice.Spec, node.Name)
	case result.Pool != slice.Spec.Pool.Name || result.Device != "gpu-0" || result.Request != "gpu":
		t.Errorf("allocation %+v, slice pool %s", result, slice.Spec.Pool.Name)
	case claim.Spec.Devices.Requests[0].Exactly.DeviceClassName != class.Name:
		t.Errorf("claim's class %s, want %s", claim.Spec.Devices.Requests[0].Exactly.DeviceClassName, class.Name)
	case claim.Status.Allocation.NodeSelector.NodeSelectorTerms[0].MatchFields[0].Values[0] != node.Name:
		t.Errorf("claim allocated on %v, want %s", claim.Status.Allocation.NodeSelector, node.Name)
	case claim.Status.ReservedFor[0].Name != pod.Name || pod.Namespace != claim.Namespace:
		t.Errorf("claim reserved for %s, pod is %s", claim.Status.ReservedFor[0].Name, pod.Name)
	case *pod.Spec.ResourceClaims[0].ResourceClaimName != claim.Name || pod.Spec.NodeName != node.Name:
		t.Errorf("pod claims %s on %s", *pod.Spec.ResourceClaims[0].ResourceClaimName, pod.Spec.NodeName)
	}
	if sum.Rewritten["ResourceClaim"] != 1 || sum.Rewritten["ResourceSlice"] != 1 || sum.Rewritten["DeviceClass"] != 1 || len(sum.MetadataOnly) != 0 {
		t.Errorf("summary %+v", sum)
	}
}
