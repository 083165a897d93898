package controlplane

import (
	"context"
	"fmt"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/deploy"
	"github.com/kubesim/kubesim/internal/clusterdir"
)

// bootstrap writes, as the admin, what kubesim's own components need in
// the API before they start: the kubelet simulator's RBAC role.
func bootstrap(ctx context.Context, d clusterdir.Dir, c *v1alpha1.Cluster) error {
	client, err := AdminClient(d, 10*time.Second)
	if err != nil {
		return err
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.UnmarshalStrict(deploy.KubeletSimClusterRole, role); err != nil {
		return fmt.Errorf("embedded kubelet-sim role: %w", err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: kubeletSimUser}},
	}
	roles, bindings := client.RbacV1().ClusterRoles(), client.RbacV1().ClusterRoleBindings()
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
	if _, err := bindings.Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}
