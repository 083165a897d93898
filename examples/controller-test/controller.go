// Package web is a small controller-runtime controller, and its test shows
// what testing it against a kubesim cluster adds to envtest: the
// Deployment it makes gets pods that are scheduled and go Running, the
// garbage collector deletes them with their owner, and a failed node's
// pods are evicted and replaced.
//
// The controller gives every ConfigMap labelled web=true a Deployment of
// the same name, owned by it: data.replicas pods (default 2) of data.image
// (default nginx).
package web

import (
	"context"
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// Label marks the ConfigMaps the controller serves: web=true.
const Label = "web"

// Reconciler makes each web ConfigMap's Deployment match it.
type Reconciler struct {
	client.Client
}

// SetupWithManager registers the controller: web ConfigMaps, and the
// Deployments they own (so a changed or deleted one is put back).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	isWeb := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetLabels()[Label] == "true" })
	return ctrl.NewControllerManagedBy(mgr).
		For(&corev1.ConfigMap{}, builder.WithPredicates(isWeb)).
		Owns(&appsv1.Deployment{}).
		Complete(r)
}

// Reconcile creates or updates the ConfigMap's Deployment. A deleted
// ConfigMap needs nothing: its owner reference lets the garbage collector
// delete the Deployment, and the Deployment's ReplicaSets and pods.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var cm corev1.ConfigMap
	if err := r.Get(ctx, req.NamespacedName, &cm); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	replicas := int32(2)
	if s, ok := cm.Data["replicas"]; ok {
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil || n < 0 {
			// Retrying cannot fix the ConfigMap; its next change will.
			ctrl.LoggerFrom(ctx).Info("ignoring web ConfigMap: data.replicas is not a count", "replicas", s)
			return ctrl.Result{}, nil
		}
		replicas = int32(n)
	}
	image := cm.Data["image"]
	if image == "" {
		image = "nginx"
	}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: cm.Name, Namespace: cm.Namespace}}
	_, err := controllerutil.CreateOrUpdate(ctx, r.Client, dep, func() error {
		labels := map[string]string{"app": cm.Name}
		dep.Spec.Replicas = &replicas
		if dep.Spec.Selector == nil { // immutable once created
			dep.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
		}
		dep.Spec.Template.Labels = labels
		if len(dep.Spec.Template.Spec.Containers) != 1 {
			dep.Spec.Template.Spec.Containers = []corev1.Container{{Name: "web"}}
		}
		dep.Spec.Template.Spec.Containers[0].Image = image
		return controllerutil.SetControllerReference(&cm, dep, r.Scheme())
	})
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("deployment %s: %w", cm.Name, err)
	}
	return ctrl.Result{}, nil
}
