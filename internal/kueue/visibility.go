package kueue

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/util/compatibility"

	visibilityopenapi "sigs.k8s.io/kueue/apis/visibility/openapi"
	visibilityv1beta1 "sigs.k8s.io/kueue/apis/visibility/v1beta1"
	visibilityv1beta2 "sigs.k8s.io/kueue/apis/visibility/v1beta2"
	qcache "sigs.k8s.io/kueue/pkg/cache/queue"
	"sigs.k8s.io/kueue/pkg/visibility/storage"

	"github.com/kubesim/kubesim/internal/aggregatedapi"
)

// visibilityService is the Service the visibility API is registered by,
// upstream's name in Kueue's namespace.
const visibilityService = "kueue-visibility-server"

// visibility is the registration of Kueue's visibility API
// (visibility.kueue.x-k8s.io: the pending Workloads of a ClusterQueue or
// LocalQueue, in order) with the cluster's aggregator.
var visibility = aggregatedapi.Registration{
	Namespace: Namespace, Service: visibilityService,
	GroupVersions: []aggregatedapi.GroupVersion{
		{Group: visibilityv1beta2.SchemeGroupVersion.Group, Version: "v1beta2"},
		{Group: visibilityv1beta2.SchemeGroupVersion.Group, Version: "v1beta1"},
	},
}

// serveVisibility serves Kueue's visibility API from its queue manager's
// memory, with Kueue's own storage, as its visibility server does, but on
// loopback for the aggregator only (aggregatedapi.Serving) rather than
// on every address with delegated authentication: the API server has
// authorized the caller for the resource before it proxies the request.
func serveVisibility(ctx context.Context, queues *qcache.Manager, serving aggregatedapi.Serving) error {
	scheme := runtime.NewScheme()
	if err := visibilityv1beta2.AddToScheme(scheme); err != nil {
		return err
	}
	if err := visibilityv1beta1.AddToScheme(scheme); err != nil {
		return err
	}
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	codecs := serializer.NewCodecFactory(scheme)

	config := genericapiserver.NewConfig(codecs)
	if err := serving.Apply(config); err != nil {
		return err
	}
	config.EffectiveVersion = compatibility.DefaultBuildEffectiveVersion()
	namer := openapinamer.NewDefinitionNamer(scheme)
	config.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(visibilityopenapi.GetOpenAPIDefinitions, namer)
	config.OpenAPIConfig.Info.Title = "Kueue visibility-server"
	config.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(visibilityopenapi.GetOpenAPIDefinitions, namer)
	config.OpenAPIV3Config.Info.Title = "Kueue visibility-server"
	config.EnableMetrics, config.EnableProfiling, config.EnableIndex = false, false, false
	server, err := config.Complete(nil).New("kueue-visibility", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return err
	}
	group := genericapiserver.NewDefaultAPIGroupInfo(visibilityv1beta2.SchemeGroupVersion.Group, scheme, runtime.NewParameterCodec(scheme), codecs)
	store := storage.NewStorage(queues)
	group.VersionedResourcesStorageMap["v1beta2"] = store
	group.VersionedResourcesStorageMap["v1beta1"] = store
	group.PrioritizedVersions = []schema.GroupVersion{visibilityv1beta2.SchemeGroupVersion, visibilityv1beta1.SchemeGroupVersion}
	if err := server.InstallAPIGroups(&group); err != nil {
		return err
	}
	return server.PrepareRun().RunWithContext(ctx)
}
