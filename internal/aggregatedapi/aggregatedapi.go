// Package aggregatedapi is what kubesim's aggregated API servers share:
// serving on loopback with the cluster CA's certificate, taking only the
// API server's aggregator as caller, and their registration with it
// (APIServices whose Service is an ExternalName of loopback). usage-metrics
// serves metrics.k8s.io with it, Kueue its visibility API.
package aggregatedapi

import (
	"context"
	"fmt"
	"net"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authentication/request/headerrequest"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/client-go/kubernetes"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregator "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"

	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/credentials"
)

// Serving is where and as whom an aggregated API server serves: a
// loopback port, its certificate, and the front proxy it takes requests
// from (the API server's client certificate of that CA and those names).
type Serving struct {
	Port              int
	CertFile, KeyFile string
	ProxyCAFile       string
	ProxyNames        []string
}

// Apply serves config on loopback with s's certificate, taking only the
// aggregator as caller: a client certificate of the front proxy's CA and
// names, asserting the user in request headers. The API server has
// authorized that user already (it authorizes a request before it
// proxies it), so every such request is allowed; any other caller is
// unauthenticated, and refused.
func (s Serving) Apply(config *genericapiserver.Config) error {
	serving := genericoptions.NewSecureServingOptions()
	serving.BindAddress = net.ParseIP(credentials.Loopback)
	serving.BindPort = s.Port
	serving.ServerCert.CertKey = genericoptions.CertKey{CertFile: s.CertFile, KeyFile: s.KeyFile}
	if err := serving.WithLoopback().ApplyTo(&config.SecureServing, &config.LoopbackClientConfig); err != nil {
		return fmt.Errorf("serving on port %d: %w", s.Port, err)
	}
	caPEM, err := os.ReadFile(s.ProxyCAFile)
	if err != nil {
		return err
	}
	ca, err := dynamiccertificates.NewStaticCAContent("front-proxy-ca", caPEM)
	if err != nil {
		return err
	}
	config.SecureServing.ClientCA = ca
	authn, _, err := authenticatorfactory.DelegatingAuthenticatorConfig{
		RequestHeaderConfig: &authenticatorfactory.RequestHeaderConfig{
			CAContentProvider:   ca,
			AllowedClientNames:  headerrequest.StaticStringSlice(s.ProxyNames),
			UsernameHeaders:     headerrequest.StaticStringSlice{"X-Remote-User"},
			UIDHeaders:          headerrequest.StaticStringSlice{},
			GroupHeaders:        headerrequest.StaticStringSlice{"X-Remote-Group"},
			ExtraHeaderPrefixes: headerrequest.StaticStringSlice{"X-Remote-Extra-"},
		},
	}.New()
	if err != nil {
		return err
	}
	config.Authentication.Authenticator = authn
	config.Authorization.Authorizer = authorizerfactory.NewAlwaysAllowAuthorizer()
	return nil
}

// ServingFor is the Serving of a component of cluster d: the cluster's
// front proxy, the component's port and its certificate pki/cert.{crt,key}.
func ServingFor(d clusterdir.Dir, port int, cert string) Serving {
	return Serving{
		Port:        port,
		CertFile:    credentials.Path(d, cert+".crt"),
		KeyFile:     credentials.Path(d, cert+".key"),
		ProxyCAFile: credentials.FrontProxyCAFile(d),
		ProxyNames:  []string{credentials.FrontProxyClientUser},
	}
}

// Registration is the APIServices of one aggregated API server: its
// Service (namespace/name), an ExternalName of loopback, and the group
// versions it serves, the first preferred.
type Registration struct {
	Namespace, Service string
	GroupVersions      []GroupVersion
}

// GroupVersion is one APIService's group and version.
type GroupVersion struct{ Group, Version string }

// Name is the APIService's name.
func (gv GroupVersion) Name() string { return gv.Version + "." + gv.Group }

// Register makes each group version an APIService served at port, whose
// Service is an ExternalName of loopback, which the API server's
// aggregator dials (through the egress proxy, which lets loopback
// through) verifying the server's certificate by the Service's name with
// the cluster's CA. A Service of type ClusterIP would need Endpoints, and
// those may not point at loopback.
func (r Registration) Register(ctx context.Context, d clusterdir.Dir, port int) error {
	ca, err := os.ReadFile(credentials.CAFile(d))
	if err != nil {
		return err
	}
	cfg, err := credentials.SetupConfig(d, 10*time.Second)
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	agg, err := aggregator.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.Namespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: r.Service, Namespace: r.Namespace},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: credentials.Loopback},
	}
	if _, err := kube.CoreV1().Services(r.Namespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	p := int32(port)
	for i, gv := range r.GroupVersions {
		want := apiregistrationv1.APIServiceSpec{
			Service:              &apiregistrationv1.ServiceReference{Namespace: r.Namespace, Name: r.Service, Port: &p},
			Group:                gv.Group,
			Version:              gv.Version,
			CABundle:             ca,
			GroupPriorityMinimum: 100,
			VersionPriority:      int32(100 - i),
		}
		if err := ensureAPIService(ctx, agg, gv.Name(), want); err != nil {
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

// FollowPort points the registration at the port the server is about to
// serve, if the cluster has started (before that, Register does it).
func (r Registration) FollowPort(d clusterdir.Dir, port int) error {
	if _, err := os.Stat(d.StartedFile()); err != nil {
		return nil
	}
	cfg, err := credentials.SetupConfig(d, 5*time.Second)
	if err != nil {
		return err
	}
	agg, err := aggregator.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx := context.Background()
	p := int32(port)
	for _, gv := range r.GroupVersions {
		current, err := agg.ApiregistrationV1().APIServices().Get(ctx, gv.Name(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue // registered at Setup (a cluster made before kubesim served it)
		}
		if err != nil {
			return fmt.Errorf("the %s registration: %w", gv.Group, err)
		}
		if s := current.Spec.Service; s == nil || s.Port == nil || *s.Port == p {
			continue
		}
		current.Spec.Service.Port = &p
		if _, err := agg.ApiregistrationV1().APIServices().Update(ctx, current, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	return nil
}
