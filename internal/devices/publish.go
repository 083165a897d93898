package devices

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

// Change is one write Plan asks for: a slice to create, update (Update
// true) or delete (Delete true).
type Change struct {
	Slice  *resourcev1.ResourceSlice
	Update bool
	Delete bool
}

// Existing lists the slices published for group's nodes. A group without
// devices has none, and no list is made: scaling a plain group costs
// nothing more.
func Existing(ctx context.Context, client kubernetes.Interface, g *v1alpha1.NodeGroup) ([]resourcev1.ResourceSlice, error) {
	if len(g.Devices) == 0 {
		return nil, nil
	}
	sel := labels.SelectorFromSet(labels.Set{v1alpha1.NodeGroupLabel: g.LabelValue(), managedKey: ManagedBy})
	list, err := client.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, fmt.Errorf("listing the ResourceSlices of node group %q: %w", g.LabelValue(), err)
	}
	return list.Items, nil
}

// Plan says what to write so that nodes, the group's nodes, publish their
// devices as the group says, given the slices published now: the missing
// created, the changed updated, those of nodes no longer in the group
// deleted (the garbage collector would delete them with their node too).
func Plan(g *v1alpha1.NodeGroup, nodes []*corev1.Node, existing []resourcev1.ResourceSlice) []Change {
	have := map[string]*resourcev1.ResourceSlice{}
	for i := range existing {
		have[existing[i].Name] = &existing[i]
	}
	var out []Change
	wanted := map[string]bool{}
	for _, node := range nodes {
		for _, want := range Slices(node, g.LabelValue(), g.Devices) {
			wanted[want.Name] = true
			cur, ok := have[want.Name]
			switch {
			case !ok:
				out = append(out, Change{Slice: want})
			case !Matches(cur, want):
				want.ResourceVersion = cur.ResourceVersion
				out = append(out, Change{Slice: want, Update: true})
			}
		}
	}
	for name, s := range have {
		if !wanted[name] {
			out = append(out, Change{Slice: s, Delete: true})
		}
	}
	return out
}

// Write makes one change; the caller names the slice in an error.
func Write(ctx context.Context, client kubernetes.Interface, c Change) error {
	slices := client.ResourceV1().ResourceSlices()
	var err error
	switch {
	case c.Delete:
		err = slices.Delete(ctx, c.Slice.Name, metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(c.Slice.UID))})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			err = nil // gone with its node, or made anew
		}
	case c.Update:
		_, err = slices.Update(ctx, c.Slice, metav1.UpdateOptions{})
	default:
		_, err = slices.Create(ctx, c.Slice, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = nil // another scale made it meanwhile
		}
	}
	return err
}

// EnsureClasses makes the DeviceClass of each of g's drivers that the
// cluster lacks; one that exists, the user's or an earlier scale's, is
// left as it is.
func EnsureClasses(ctx context.Context, client kubernetes.Interface, g *v1alpha1.NodeGroup) error {
	for _, class := range Classes(g.Devices) {
		_, err := client.ResourceV1().DeviceClasses().Create(ctx, class, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("DeviceClass %s: %w", class.Name, err)
		}
	}
	return nil
}

// Withdraw deletes the slices published for the node called node, as when
// its driver stops; it returns how many there were.
func Withdraw(ctx context.Context, client kubernetes.Interface, node string) (int, error) {
	sel := labels.SelectorFromSet(labels.Set{nodeLabel: node, managedKey: ManagedBy})
	list, err := client.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return 0, fmt.Errorf("listing the ResourceSlices of node %s: %w", node, err)
	}
	for i := range list.Items {
		if err := Write(ctx, client, Change{Slice: &list.Items[i], Delete: true}); err != nil {
			return 0, fmt.Errorf("ResourceSlice %s: %w", list.Items[i].Name, err)
		}
	}
	return len(list.Items), nil
}

// Republish makes node publish its group's devices again (after
// Withdraw); it leaves the slices of the group's other nodes alone.
func Republish(ctx context.Context, client kubernetes.Interface, g *v1alpha1.NodeGroup, node *corev1.Node) error {
	existing, err := Existing(ctx, client, g)
	if err != nil || len(g.Devices) == 0 {
		return err
	}
	var own []resourcev1.ResourceSlice
	for _, s := range existing {
		if s.Labels[nodeLabel] == node.Name {
			own = append(own, s)
		}
	}
	for _, c := range Plan(g, []*corev1.Node{node}, own) {
		if err := Write(ctx, client, c); err != nil {
			return fmt.Errorf("ResourceSlice %s: %w", c.Slice.Name, err)
		}
	}
	return nil
}
