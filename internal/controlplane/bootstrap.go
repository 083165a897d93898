package controlplane

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/component"
	"github.com/kubesim/kubesim/internal/credentials"
)

// legacyAnyKindRole is the role older kubesims gave the simulator on every
// kind; its binding is removed (the simulator's entry grants what Stages
// name).
const legacyAnyKindRole = "kubesim:kubelet-sim:any-kind"

// bootstrapPoll is how often the API server's readiness is asked after
// bootstrap.
const bootstrapPoll = 25 * time.Millisecond

// bootstrapThenReady bootstraps the cluster while the API server finishes
// starting, then waits until it is ready: the components after it start on
// a ready API server.
func bootstrapThenReady(ctx context.Context, d clusterdir.Dir, c *v1alpha1.Cluster) error {
	if err := bootstrap(ctx, d, c); err != nil {
		return err
	}
	err := wait.PollUntilContextTimeout(ctx, bootstrapPoll, time.Minute, true, func(ctx context.Context) (bool, error) {
		return APIServerReady(ctx, d, c) == nil, nil
	})
	if err != nil {
		return err
	}
	return os.WriteFile(APIServerSetUpFile(d), nil, 0o600)
}

// bootstrap writes, as the admin, what kubesim's own components need in
// the API before they start: the CRDs and the RBAC roles their entries
// declare (the Stage CRD, the roles of the kubelet simulator, the
// descheduler, the dpdb controller and the clusters federated with this
// one), whether or not the cluster runs them; an add-on's (OnlyIfRun, the
// autoscaler) only where it runs.
func bootstrap(ctx context.Context, d clusterdir.Dir, c *v1alpha1.Cluster) error {
	client, err := credentials.AdminClient(d, 10*time.Second)
	if err != nil {
		return err
	}
	comps := slices.DeleteFunc(Components(), func(comp component.Component) bool { return comp.OnlyIfRun && !comp.IsEnabled(c) })
	bindings, err := roleBindings(comps)
	if err != nil {
		return err
	}
	// The namespaced bindings below need their namespaces (the API server
	// makes kube-node-lease too, but maybe not yet).
	for _, ns := range bindingNamespaces(bindings) {
		if err := ensureNamespace(ctx, client, ns); err != nil {
			return err
		}
	}
	// Every write is independent of the others: all at once, as create
	// waits on this.
	var g errgroup.Group
	if OwnVersion(c) {
		g.Go(func() error { return writeUpstreamDefaults(ctx, client) })
	}
	for _, comp := range comps {
		for _, crd := range comp.CRDs {
			g.Go(func() error { return wrap(comp.Name+"'s CRD", installCRD(ctx, d, c, comp, crd)) })
		}
	}
	for _, b := range bindings {
		g.Go(func() error { return bindRole(ctx, client, b.role, b.user, b.namespace) })
	}
	g.Go(func() error {
		err := client.RbacV1().ClusterRoleBindings().Delete(ctx, legacyAnyKindRole, metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
	if err := g.Wait(); err != nil {
		return err
	}
	// After the Stage CRD is served, before the simulator starts.
	return createClusterStages(ctx, d, c)
}

// roleBinding binds a role to a user: cluster-wide, or in namespace only.
type roleBinding struct {
	role      *rbacv1.ClusterRole
	user      string
	namespace string
}

// roleBindings are the grants of the components' entries.
func roleBindings(comps []component.Component) ([]roleBinding, error) {
	var bindings []roleBinding
	for _, comp := range comps {
		for _, g := range comp.Grants {
			role, err := embeddedRole(g.Role)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", comp.Name, err)
			}
			user := g.User
			if user == "" && comp.Identity != nil {
				user = comp.Identity.User
			}
			if user == "" {
				return nil, fmt.Errorf("%s: grant of %s names no user and the component has no identity", comp.Name, role.Name)
			}
			bindings = append(bindings, roleBinding{role, user, g.Namespace})
		}
	}
	return bindings, nil
}

// bindingNamespaces are the namespaces of the namespaced bindings.
func bindingNamespaces(bindings []roleBinding) []string {
	var namespaces []string
	for _, b := range bindings {
		if b.namespace != "" && !slices.Contains(namespaces, b.namespace) {
			namespaces = append(namespaces, b.namespace)
		}
	}
	return namespaces
}

// wrap names what failed, if anything did.
func wrap(what string, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func embeddedRole(manifest []byte) (*rbacv1.ClusterRole, error) {
	role := &rbacv1.ClusterRole{}
	if err := yaml.UnmarshalStrict(manifest, role); err != nil {
		return nil, fmt.Errorf("embedded ClusterRole: %w", err)
	}
	return role, nil
}

// bindRole creates (or brings up to date) a ClusterRole and binds it to
// user: cluster-wide, or in namespace only if one is given.
func bindRole(ctx context.Context, client kubernetes.Interface, role *rbacv1.ClusterRole, user, namespace string) error {
	roles := client.RbacV1().ClusterRoles()
	if _, err := roles.Create(ctx, role, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		current, err := roles.Get(ctx, role.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		current.Rules = role.Rules // a newer kubesim may need more
		if _, err := roles.Update(ctx, current, metav1.UpdateOptions{}); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	meta := metav1.ObjectMeta{Name: role.Name, Namespace: namespace}
	ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name}
	subjects := []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}
	var err error
	if namespace == "" {
		_, err = client.RbacV1().ClusterRoleBindings().Create(ctx,
			&rbacv1.ClusterRoleBinding{ObjectMeta: meta, RoleRef: ref, Subjects: subjects}, metav1.CreateOptions{})
	} else {
		_, err = client.RbacV1().RoleBindings(namespace).Create(ctx,
			&rbacv1.RoleBinding{ObjectMeta: meta, RoleRef: ref, Subjects: subjects}, metav1.CreateOptions{})
	}
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// ensureNamespace creates a namespace unless it exists.
func ensureNamespace(ctx context.Context, client kubernetes.Interface, name string) error {
	_, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("namespace %s: %w", name, err)
	}
	return nil
}

// installCRD creates or updates an embedded CRD and waits until it is
// served, so the components that use it find it when they start.
func installCRD(ctx context.Context, d clusterdir.Dir, c *v1alpha1.Cluster, comp component.Component, manifest []byte) error {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(manifest, crd); err != nil {
		return fmt.Errorf("embedded CRD: %w", err)
	}
	if comp.Conversion != nil {
		conversion, err := comp.Conversion(d, c, crd.Name)
		if err != nil {
			return err
		}
		if conversion != nil {
			crd.Spec.Conversion = conversion
		}
	}
	// As long as the API server gives any request (scaledTimeouts):
	// a big CRD (Kueue's) takes its create seconds of real work on a busy
	// machine, which 10 s of a 60× clock would cut off at a sixth of one.
	cfg, err := credentials.SetupConfig(d, time.Minute)
	if err != nil {
		return err
	}
	client, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	crds := client.ApiextensionsV1().CustomResourceDefinitions()
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		current, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		current.Spec = crd.Spec
		if _, err := crds.Update(ctx, current, metav1.UpdateOptions{}); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		current, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, cond := range current.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}
