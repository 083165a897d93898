package usage

import (
	"context"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/aggregatedapi"
	"github.com/kubesim/kubesim/internal/clusterdir"
)

// APIServiceName is the registration of metrics.k8s.io with the API
// server's aggregator.
const APIServiceName = "v1beta1.metrics.k8s.io"

// registration makes metrics.k8s.io, and the custom and external metrics
// APIs in the versions custom-metrics-apiserver serves (clients of
// custom.metrics.k8s.io pick v1beta2; older ones ask v1beta1), aggregated
// APIs served by the component.
var registration = aggregatedapi.Registration{
	Namespace: ServiceNamespace, Service: ServiceName,
	GroupVersions: []aggregatedapi.GroupVersion{
		{Group: "metrics.k8s.io", Version: "v1beta1"},
		{Group: "custom.metrics.k8s.io", Version: "v1beta2"},
		{Group: "custom.metrics.k8s.io", Version: "v1beta1"},
		{Group: "external.metrics.k8s.io", Version: "v1beta1"},
	},
}

func register(ctx context.Context, d clusterdir.Dir, c *v1alpha1.Cluster) error {
	return registration.Register(ctx, d, c.Status.Ports.Get(ComponentName, ""))
}

// followPort points the registration at the port the component is about
// to serve.
func followPort(d clusterdir.Dir, c *v1alpha1.Cluster) error {
	return registration.FollowPort(d, c.Status.Ports.Get(ComponentName, ""))
}
