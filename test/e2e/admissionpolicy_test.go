//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A MutatingAdmissionPolicy mutates what it matches. Patch 0010 has the API
// server fetch the OpenAPI schema list on a policy's first use rather than
// poll it from its start: the first ConfigMap it admits is the first use.
func TestMutatingAdmissionPolicy(t *testing.T) {
	e := newEnv(t)
	e.createCluster("map")
	e.apply(`apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: label-configmaps}
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [configmaps]
  failurePolicy: Fail
  reinvocationPolicy: Never
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{metadata: Object.metadata{labels: {"mutated-by": "policy"}}}'
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: label-configmaps}
spec:
  policyName: label-configmaps
`)
	client := e.client()
	n := 0
	// The API server takes the policy up from its informer within a moment.
	eventually(t, 30*time.Second, "a new ConfigMap labelled by the policy", func() error {
		n++
		cm, err := client.CoreV1().ConfigMaps("default").Create(context.Background(),
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", n)}}, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		if got := cm.Labels["mutated-by"]; got != "policy" {
			return fmt.Errorf("ConfigMap %s has labels %v", cm.Name, cm.Labels)
		}
		return nil
	})
}
