package kubeletsim

import (
	"context"
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery/cached/memory"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"

	kwokv1alpha1 "github.com/kubesim/kubesim/apis/kwok/v1alpha1"
	"github.com/kubesim/kubesim/internal/stage"
)

// A kind only a built-in stage names (ResourceClaims, for the binding
// conditions stage) that the cluster does not serve is left out, not
// retried for ever; a user's Stage naming one is still an error, so its
// author hears of it.
func TestBuiltinStagesOfUnservedKindsAreLeftOut(t *testing.T) {
	disc := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}
	disc.Resources = []*metav1.APIResourceList{{GroupVersion: "v1", APIResources: []metav1.APIResource{{Name: "services", Kind: "Service", Namespaced: true}}}}
	o := newOtherKinds(context.Background(), &rest.Config{}, dynamicfake.NewSimpleDynamicClient(runtime.NewScheme()),
		memory.NewMemCacheClient(disc), record.NewFakeRecorder(10), func() string { return "v" })
	builtin, err := stage.Builtin("fast")
	if err != nil {
		t.Fatal(err)
	}
	if err := o.update(builtin); err != nil {
		t.Errorf("built-in stages alone, ResourceClaims not served: %v", err)
	}
	user, err := stage.Compile(&kwokv1alpha1.Stage{
		ObjectMeta: metav1.ObjectMeta{Name: "mine"},
		Spec: kwokv1alpha1.StageSpec{
			ResourceRef: kwokv1alpha1.StageResourceRef{APIGroup: "resource.k8s.io", Kind: "ResourceClaim"},
			Selector:    &kwokv1alpha1.StageSelector{},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	user.Revision = "7"
	var notServed *kindNotServed
	if err := o.update(append(builtin, user)); !errors.As(err, &notServed) {
		t.Errorf("a user's Stage of a kind not served: %v, want it named", err)
	}
}
