package karpenter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"

	corev1 "k8s.io/api/core/v1"

	kwok "sigs.k8s.io/karpenter/kwok/cloudprovider"
	karpenterv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// instanceTypesField is where a cluster's spec names the file.
const instanceTypesField = "autoscaler.karpenter.instanceTypes"

// ReadInstanceTypes reads and checks a file of instance types in the
// shape of the KWOK provider's catalog, so a bad one is refused before the
// cluster is made rather than met as a Karpenter that launches nothing:
// the provider itself takes any JSON it can decode, and a type without a
// zone or capacity type, say, is one no NodePool can ever launch.
func ReadInstanceTypes(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", instanceTypesField, err)
	}
	if err := checkInstanceTypes(data); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", instanceTypesField, path, err)
	}
	return data, nil
}

func checkInstanceTypes(data []byte) error {
	var types []kwok.InstanceTypeOptions
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&types); err != nil {
		return fmt.Errorf("not a JSON list of instance types as in Karpenter's kwok/cloudprovider/instance_types.json: %w", err)
	}
	if len(types) == 0 {
		return fmt.Errorf("no instance types; give at least one, or leave %s out for the built-in catalog", instanceTypesField)
	}
	seen := map[string]bool{}
	for i, t := range types {
		at := fmt.Sprintf("[%d]", i)
		if t.Name == "" {
			return fmt.Errorf("%s.name: missing; every instance type needs a name", at)
		}
		at = fmt.Sprintf("[%d] (%s)", i, t.Name)
		if seen[t.Name] {
			return fmt.Errorf("%s.name: given twice; names must be unique", at)
		}
		seen[t.Name] = true
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if q, ok := t.Resources[r]; !ok || q.Sign() <= 0 {
				return fmt.Errorf("%s.resources.%s: missing or not positive; give the type's capacity, e.g. {\"cpu\": \"4\", \"memory\": \"16Gi\"}", at, r)
			}
		}
		if t.Architecture == "" {
			return fmt.Errorf("%s.architecture: missing; e.g. amd64 or arm64", at)
		}
		if len(t.OperatingSystems) == 0 {
			return fmt.Errorf("%s.operatingSystems: missing; e.g. [\"linux\"]", at)
		}
		if len(t.Offerings) == 0 {
			return fmt.Errorf("%s.offerings: none; a type without offerings can never be launched", at)
		}
		for j, o := range t.Offerings {
			oat := fmt.Sprintf("%s.offerings[%d]", at, j)
			if o.Price < 0 || math.IsNaN(o.Price) || math.IsInf(o.Price, 0) {
				return fmt.Errorf("%s.Price: %v is not a price per hour (0 or more)", oat, o.Price)
			}
			for _, key := range []string{corev1.LabelTopologyZone, karpenterv1.CapacityTypeLabelKey} {
				if !hasValue(o.Requirements, key) {
					return fmt.Errorf("%s.Requirements: no %q requirement with a value; every offering says its zone and capacity type (on-demand, spot, reserved)", oat, key)
				}
			}
		}
	}
	return nil
}

// hasValue reports whether the requirements give key a value with In.
func hasValue(reqs []corev1.NodeSelectorRequirement, key string) bool {
	for _, r := range reqs {
		if r.Key == key && r.Operator == corev1.NodeSelectorOpIn && len(r.Values) > 0 {
			return true
		}
	}
	return false
}
