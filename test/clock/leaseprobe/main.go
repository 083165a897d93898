// Command leaseprobe runs client-go's leader election between two candidates
// and client-go's token-bucket rate limiter, as upstream components use them,
// and reports their timings in virtual and real time. Built with the
// scaled-clock overlay (patches/go) it shows that lease renewals, take-overs
// and client-side rate limits all follow the scaled clock. The Lease lives in
// client-go's fake clientset: the clock, not the API server, is under test.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/typed/coordination/v1/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/klog/v2"
)

func realNow() time.Duration {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 1, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

type span struct{ Virtual, Real string }

func since(v time.Time, r time.Duration) span {
	return span{time.Since(v).Round(time.Millisecond).String(), (realNow() - r).Round(time.Millisecond).String()}
}

func main() {
	klog.LogToStderr(false)
	scheme := runtime.NewScheme()
	if err := coordinationv1.AddToScheme(scheme); err != nil {
		fail(err)
	}
	tracker := k8stesting.NewObjectTracker(scheme, serializer.NewCodecFactory(scheme).UniversalDecoder())
	client := &fake.FakeCoordinationV1{Fake: &k8stesting.Fake{}}
	var renewals atomic.Int64
	client.AddReactor("update", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		renewals.Add(1) // counted, then handled by the tracker below
		return false, nil, nil
	})
	client.AddReactor("*", "*", k8stesting.ObjectReaction(tracker))

	out := map[string]any{"scale": os.Getenv("KUBESIM_TIME_SCALE")}

	// Upstream's defaults for kube-controller-manager and kube-scheduler.
	leading := map[string]chan struct{}{"a": make(chan struct{}), "b": make(chan struct{})}
	elector := func(id string) *leaderelection.LeaderElector {
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock: &resourcelock.LeaseLock{
				LeaseMeta:  metav1.ObjectMeta{Namespace: "kube-system", Name: "probe"},
				Client:     client,
				LockConfig: resourcelock.ResourceLockConfig{Identity: id},
			},
			LeaseDuration: 15 * time.Second,
			RenewDeadline: 10 * time.Second,
			RetryPeriod:   2 * time.Second,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(context.Context) { close(leading[id]) },
				OnStoppedLeading: func() {},
			},
		})
		if err != nil {
			fail(err)
		}
		return le
	}
	ctxA, stopA := context.WithCancel(context.Background())
	v0, r0 := time.Now(), realNow()
	go elector("a").Run(ctxA)
	wait(leading["a"], "a to lead")
	out["aLeadsAfter"] = since(v0, r0)
	ctxB, stopB := context.WithCancel(context.Background())
	defer stopB()
	go elector("b").Run(ctxB)
	// a renews every RetryPeriod: count its renewals over 20s virtual.
	renewals.Store(0)
	v1, r1 := time.Now(), realNow()
	time.Sleep(20 * time.Second)
	out["renewalsIn20s"] = renewals.Load()
	out["renewalWindow"] = since(v1, r1)
	// a stops renewing (a crash: no release); b takes over once the lease
	// has not changed for LeaseDuration.
	stopA()
	v2, r2 := time.Now(), realNow()
	wait(leading["b"], "b to take over")
	out["bTakesOverAfter"] = since(v2, r2)

	// Client-go's default client-side limit: 5 QPS, burst 10. 60 requests.
	rl := flowcontrol.NewTokenBucketRateLimiter(5, 10)
	v3, r3 := time.Now(), realNow()
	for range 60 {
		rl.Accept()
	}
	out["60RequestsAt5QPSBurst10"] = since(v3, r3)

	b, _ := json.Marshal(out)
	fmt.Println(string(b))
}

func wait(c chan struct{}, what string) {
	select {
	case <-c:
	case <-time.After(2 * time.Minute):
		fail(fmt.Errorf("waited 2 virtual minutes for %s", what))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "leaseprobe:", err)
	os.Exit(1)
}
