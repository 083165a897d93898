package dpdb

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// The eviction lock of a federation is one Lease, lockLease, in the dpdb
// namespace of every member cluster. An eviction takes the Leases of every
// cluster its DPDBs federate, in one global order (by cluster name), all
// or none; a Lease expires after lockDuration, so a holder that died
// blocks others for that long at most.
const (
	lockLease    = "eviction-lock"
	lockDuration = 10 * time.Second
)

// lockWait bounds how long an eviction waits for a held lock (a variable
// for tests).
var lockWait = 4 * time.Second

// lockTarget is one cluster's lock: its name ("" for this one) and client.
type lockTarget struct {
	cluster string
	client  kubernetes.Interface
}

// federationLock is a set of held Leases.
type federationLock struct {
	namespace, holder string
	held              []lockTarget
}

// acquireAll takes every target's Lease in cluster-name order, or none.
func acquireAll(ctx context.Context, namespace, holder string, targets []lockTarget) (*federationLock, error) {
	slices.SortFunc(targets, func(a, b lockTarget) int { return cmp.Compare(a.cluster, b.cluster) })
	l := &federationLock{namespace: namespace, holder: holder}
	deadline := time.Now().Add(lockWait)
	for _, t := range targets {
		if err := acquire(ctx, t.client, namespace, holder, deadline); err != nil {
			l.release(context.WithoutCancel(ctx))
			return nil, fmt.Errorf("lock in cluster %s: %w", clusterName(t.cluster), err)
		}
		l.held = append(l.held, t)
	}
	return l, nil
}

func clusterName(c string) string {
	if c == "" {
		return "(this cluster)"
	}
	return c
}

// acquire takes one Lease, waiting (until deadline) while another holder
// has it and it has not expired.
func acquire(ctx context.Context, client kubernetes.Interface, namespace, holder string, deadline time.Time) error {
	leases := client.CoordinationV1().Leases(namespace)
	for {
		now := metav1.NewMicroTime(time.Now())
		lease, err := leases.Get(ctx, lockLease, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			_, err = leases.Create(ctx, &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Name: lockLease, Namespace: namespace},
				Spec:       leaseSpec(holder, now),
			}, metav1.CreateOptions{})
			if err == nil {
				return nil
			}
			if !apierrors.IsAlreadyExists(err) {
				return err
			}
		case err != nil:
			return err
		case free(lease, now.Time):
			lease.Spec = leaseSpec(holder, now)
			_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
			if err == nil {
				return nil
			}
			if !apierrors.IsConflict(err) {
				return err
			}
		}
		if time.Now().After(deadline) {
			holder := ""
			if lease != nil && lease.Spec.HolderIdentity != nil {
				holder = *lease.Spec.HolderIdentity
			}
			return fmt.Errorf("held by %s; retry", holder)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func leaseSpec(holder string, now metav1.MicroTime) coordinationv1.LeaseSpec {
	return coordinationv1.LeaseSpec{
		HolderIdentity:       &holder,
		LeaseDurationSeconds: ptr.To(int32(lockDuration / time.Second)),
		AcquireTime:          &now,
		RenewTime:            &now,
	}
}

// free reports whether a Lease is released or expired.
func free(l *coordinationv1.Lease, now time.Time) bool {
	s := l.Spec
	if s.HolderIdentity == nil || *s.HolderIdentity == "" || s.RenewTime == nil || s.LeaseDurationSeconds == nil {
		return true
	}
	return now.After(s.RenewTime.Add(time.Duration(*s.LeaseDurationSeconds) * time.Second))
}

// release gives back every held Lease still held by this holder.
func (l *federationLock) release(ctx context.Context) {
	for i := len(l.held) - 1; i >= 0; i-- {
		leases := l.held[i].client.CoordinationV1().Leases(l.namespace)
		lease, err := leases.Get(ctx, lockLease, metav1.GetOptions{})
		if err != nil || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != l.holder {
			continue
		}
		lease.Spec.HolderIdentity = ptr.To("")
		_, _ = leases.Update(ctx, lease, metav1.UpdateOptions{}) // a failure leaves it to expire
	}
	l.held = nil
}
