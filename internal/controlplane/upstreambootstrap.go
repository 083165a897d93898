package controlplane

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	schedulingapiv1 "k8s.io/kubernetes/pkg/apis/scheduling/v1"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac/bootstrappolicy"
)

// writeUpstreamDefaults creates the API server's default RBAC policy and
// system PriorityClasses that do not exist yet, many at a time.
func writeUpstreamDefaults(ctx context.Context, client kubernetes.Interface) error {
	rbac := client.RbacV1()
	var writes []func() error
	add := func(what string, create func() error) {
		writes = append(writes, func() error {
			if err := create(); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("upstream default %s: %w", what, err)
			}
			return nil
		})
	}
	opts := metav1.CreateOptions{}
	for _, r := range append(bootstrappolicy.ClusterRoles(), bootstrappolicy.ControllerRoles()...) {
		add("ClusterRole "+r.Name, func() error { _, err := rbac.ClusterRoles().Create(ctx, &r, opts); return err })
	}
	for _, b := range append(bootstrappolicy.ClusterRoleBindings(), bootstrappolicy.ControllerRoleBindings()...) {
		add("ClusterRoleBinding "+b.Name, func() error { _, err := rbac.ClusterRoleBindings().Create(ctx, &b, opts); return err })
	}
	for _, name := range controllerServiceAccounts() {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceSystem}}
		add("ServiceAccount "+name, func() error {
			_, err := client.CoreV1().ServiceAccounts(metav1.NamespaceSystem).Create(ctx, sa, opts)
			return err
		})
	}
	for _, pc := range schedulingapiv1.SystemPriorityClasses() {
		add("PriorityClass "+pc.Name, func() error { _, err := client.SchedulingV1().PriorityClasses().Create(ctx, pc, opts); return err })
	}
	// Namespaced roles need their namespace, which the API server's own
	// controller may not have made yet.
	namespaces := map[string]bool{metav1.NamespaceSystem: true}
	for ns := range bootstrappolicy.NamespaceRoles() {
		namespaces[ns] = true
	}
	for ns := range bootstrappolicy.NamespaceRoleBindings() {
		namespaces[ns] = true
	}
	for ns := range namespaces {
		if err := ensureNamespace(ctx, client, ns); err != nil {
			return err
		}
	}
	for ns, roles := range bootstrappolicy.NamespaceRoles() {
		for _, r := range roles {
			add("Role "+ns+"/"+r.Name, func() error { _, err := rbac.Roles(ns).Create(ctx, &r, opts); return err })
		}
	}
	for ns, bindings := range bootstrappolicy.NamespaceRoleBindings() {
		for _, b := range bindings {
			add("RoleBinding "+ns+"/"+b.Name, func() error { _, err := rbac.RoleBindings(ns).Create(ctx, &b, opts); return err })
		}
	}
	var g errgroup.Group
	g.SetLimit(16)
	for _, w := range writes {
		g.Go(w)
	}
	return g.Wait()
}

// controllerServiceAccounts are the service accounts of the
// controller-manager's controllers (the subjects of upstream's controller
// role bindings). With --use-service-account-credentials it looks each up
// as it builds its controllers, one at a time, and creates the missing
// ones: made here, many at a time, they cost it one read each. Those of
// controllers that do not run here (cloud ones, ones behind a feature
// gate) are made too, as their bindings are.
func controllerServiceAccounts() []string {
	var names []string
	for _, b := range bootstrappolicy.ControllerRoleBindings() {
		for _, s := range b.Subjects {
			if s.Kind == rbacv1.ServiceAccountKind && s.Namespace == metav1.NamespaceSystem {
				names = append(names, s.Name)
			}
		}
	}
	return names
}
