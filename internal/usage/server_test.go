package usage

import (
	"testing"

	"k8s.io/kube-openapi/pkg/validation/spec"
	generatedopenapi "sigs.k8s.io/metrics-server/pkg/api/generated/openapi"
)

// The OpenAPI definitions served hold the three APIs' types and all they
// refer to, and not the rest of core/v1 that custom-metrics-apiserver
// brings along.
func TestOpenAPIDefinitions(t *testing.T) {
	ref := func(name string) spec.Ref { return spec.MustCreateRef("#/definitions/" + name) }
	defs := openAPIDefinitions(ref)
	for _, want := range []string{
		"io.k8s.metrics.pkg.apis.metrics.v1beta1.PodMetrics",
		"io.k8s.metrics.pkg.apis.custom_metrics.v1beta2.MetricValueList",
		"io.k8s.metrics.pkg.apis.custom_metrics.v1beta1.MetricValueList",
		"io.k8s.metrics.pkg.apis.external_metrics.v1beta1.ExternalMetricValueList",
		"io.k8s.api.core.v1.ObjectReference", // custom_metrics v1beta1's describedObject
	} {
		if _, ok := defs[want]; !ok {
			t.Errorf("no definition of %s", want)
		}
	}
	metricsServer := generatedopenapi.GetOpenAPIDefinitions(ref)
	for name, d := range defs {
		if _, ok := metricsServer[name]; ok {
			continue // metrics-server's own, as it serves them
		}
		for _, dep := range d.Dependencies {
			if _, ok := defs[dep]; !ok {
				t.Errorf("%s refers to %s, which has no definition", name, dep)
			}
		}
	}
	if _, ok := defs["io.k8s.api.core.v1.Pod"]; ok {
		t.Error("core/v1 Pod is defined: nothing served refers to it")
	}
	t.Logf("%d definitions", len(defs))
}
