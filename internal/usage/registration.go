package usage

import (
	"context"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregator "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/credentials"
)

// APIServiceName is the registration of metrics.k8s.io with the API
// server's aggregator.
const APIServiceName = "v1beta1.metrics.k8s.io"

// apiServices are the group versions the component serves, each
// registered with the aggregator: metrics.k8s.io, and the custom and
// external metrics APIs in the versions custom-metrics-apiserver serves
// (clients of custom.metrics.k8s.io pick v1beta2; older ones ask v1beta1).
var apiServices = []struct{ group, version string }{
	{"metrics.k8s.io", "v1beta1"},
	{"custom.metrics.k8s.io", "v1beta2"},
	{"custom.metrics.k8s.io", "v1beta1"},
	{"external.metrics.k8s.io", "v1beta1"},
}

// register makes metrics.k8s.io, custom.metrics.k8s.io and
// external.metrics.k8s.io aggregated APIs served by the component, each an APIService whose Service is an ExternalName of loopback,
// which the API server's aggregator dials (through the egress proxy,
// which lets loopback through) at the Service's port, verifying the
// component's certificate by the Service's name with the cluster's CA.
// A Service of type ClusterIP would need Endpoints, and those may not
// point at loopback.
func register(ctx context.Context, d clusterdir.Dir, c *v1alpha1.Cluster) error {
	ca, err := os.ReadFile(credentials.CAFile(d))
	if err != nil {
		return err
	}
	cfg, err := credentials.AdminConfig(d)
	if err != nil {
		return err
	}
	cfg.Timeout = 10 * time.Second
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	agg, err := aggregator.NewForConfig(cfg)
	if err != nil {
		return err
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: ServiceName, Namespace: ServiceNamespace},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: credentials.Loopback},
	}
	services := kube.CoreV1().Services(ServiceNamespace)
	if _, err := services.Create(ctx, svc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	port := int32(c.Status.Ports.Get(ComponentName, ""))
	for i, gv := range apiServices {
		want := apiregistrationv1.APIServiceSpec{
			Service:              &apiregistrationv1.ServiceReference{Namespace: ServiceNamespace, Name: ServiceName, Port: &port},
			Group:                gv.group,
			Version:              gv.version,
			CABundle:             ca,
			GroupPriorityMinimum: 100,
			VersionPriority:      int32(100 - i), // v1beta2 before v1beta1
		}
		if err := ensureAPIService(ctx, agg, gv.version+"."+gv.group, want); err != nil {
			return err
		}
	}
	return nil
}

func ensureAPIService(ctx context.Context, agg aggregator.Interface, name string, want apiregistrationv1.APIServiceSpec) error {
	apiServices := agg.ApiregistrationV1().APIServices()
	current, err := apiServices.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = apiServices.Create(ctx, &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: want}, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	current.Spec = want
	_, err = apiServices.Update(ctx, current, metav1.UpdateOptions{})
	return err
}

// followPort points the registration at the port the component is about
// to serve, if the cluster has started (before that, Setup registers it).
func followPort(d clusterdir.Dir, c *v1alpha1.Cluster) error {
	if _, err := os.Stat(d.StartedFile()); err != nil {
		return nil
	}
	cfg, err := credentials.AdminConfig(d)
	if err != nil {
		return err
	}
	cfg.Timeout = 5 * time.Second
	agg, err := aggregator.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx := context.Background()
	port := int32(c.Status.Ports.Get(ComponentName, ""))
	for _, gv := range apiServices {
		name := gv.version + "." + gv.group
		current, err := agg.ApiregistrationV1().APIServices().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue // registered at Setup (a cluster made before kubesim served it)
		}
		if err != nil {
			return fmt.Errorf("the %s registration: %w", gv.group, err)
		}
		if s := current.Spec.Service; s == nil || s.Port == nil || *s.Port == port {
			continue
		}
		current.Spec.Service.Port = &port
		if _, err := agg.ApiregistrationV1().APIServices().Update(ctx, current, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	return nil
}
