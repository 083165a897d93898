package scenario

import (
	"context"
	"errors"
	"regexp"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

// blocking is a fake step kind that works until its context ends, as a
// `kubectl get pods -w` does, and says whether it saw a deadline.
func blocking(sawDeadline *bool) *stepKind {
	return &stepKind{name: "fake", do: func(x *stepRun) (string, error) {
		_, *sawDeadline = x.ctx.Deadline()
		<-x.ctx.Done()
		return "", x.ctx.Err()
	}}
}

// runFake runs k as step 3 "watch pods" under timeout, on ctx.
func runFake(t *testing.T, ctx context.Context, k *stepKind, timeout time.Duration) (time.Duration, error) {
	t.Helper()
	started := time.Now()
	_, err := runStep(ctx, k, &stepRun{step: &v1alpha1.Step{}, timeout: timeout}, `step 3 "watch pods" (fake)`)
	return time.Since(started), err
}

func TestAStepEndsAtItsTimeoutWithOneLine(t *testing.T) {
	var sawDeadline bool
	took, err := runFake(t, context.Background(), blocking(&sawDeadline), 50*time.Millisecond)
	if !sawDeadline {
		t.Error("the step's context had no deadline")
	}
	if took > 5*time.Second {
		t.Errorf("the step ran %s past a 50ms timeout", took)
	}
	want := regexp.MustCompile(`^step 3 "watch pods" \(fake\): timed out after [0-9.]+m?s \(timeout: 50ms\)$`)
	if err == nil || !want.MatchString(err.Error()) {
		t.Errorf("error %v, want one line matching %s", err, want)
	}
}

func TestARunTimeoutNamesTheStepAndTheRunsTimeout(t *testing.T) {
	ctx, cancel := context.WithTimeoutCause(context.Background(), 50*time.Millisecond, &runTimeout{after: 30 * time.Minute})
	defer cancel()
	var sawDeadline bool
	took, err := runFake(t, ctx, blocking(&sawDeadline), time.Hour)
	if took > 5*time.Second {
		t.Errorf("the step ran %s past the run's timeout", took)
	}
	want := regexp.MustCompile(`^step 3 "watch pods" \(fake\): stopped by the run's --timeout 30m0s, [0-9.]+m?s into the step$`)
	if err == nil || !want.MatchString(err.Error()) {
		t.Errorf("error %v, want one line matching %s", err, want)
	}
	if runTimedOut(ctx) == nil {
		t.Error("runTimedOut: nil for a context its --timeout ended")
	}
}

func TestAnInterruptedStepKeepsItsError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	var sawDeadline bool
	_, err := runFake(t, ctx, blocking(&sawDeadline), time.Hour)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want the step's own (context canceled)", err)
	}
	if runTimedOut(ctx) != nil {
		t.Error("runTimedOut: Ctrl-C taken for --timeout")
	}
}

func TestAKindsOwnTimeoutReportIsKept(t *testing.T) {
	k := &stepKind{name: "wait", do: func(x *stepRun) (string, error) {
		<-x.ctx.Done()
		return "pods", &timeoutReport{"not after 50ms: 1 of 3 pods Running"}
	}}
	_, err := runFake(t, context.Background(), k, 50*time.Millisecond)
	if err == nil || err.Error() != "not after 50ms: 1 of 3 pods Running" {
		t.Errorf("error %v, want the wait's own words", err)
	}
}

func TestAStepThatEndsInTimePasses(t *testing.T) {
	k := &stepKind{name: "fake", do: func(*stepRun) (string, error) { return "done", nil }}
	if _, err := runFake(t, context.Background(), k, time.Second); err != nil {
		t.Errorf("error %v", err)
	}
	k = &stepKind{name: "fake", do: func(*stepRun) (string, error) { return "", errors.New("no such pod") }}
	if _, err := runFake(t, context.Background(), k, time.Second); err == nil || err.Error() != "no such pod" {
		t.Errorf("error %v, want the step's own", err)
	}
}

func TestStepTimeoutDefaults(t *testing.T) {
	kind := func(name string) *stepKind {
		for _, k := range stepKinds.kinds {
			if k.name == name {
				return k
			}
		}
		t.Fatalf("no step kind %s", name)
		return nil
	}
	given := &metav1.Duration{Duration: 2 * time.Second}
	for _, c := range []struct {
		kind string
		step v1alpha1.Step
		want time.Duration
	}{
		{"kubectl", v1alpha1.Step{Kubectl: []string{"get", "pods"}}, time.Minute},
		{"kubectl", v1alpha1.Step{Kubectl: []string{"get", "pods"}, Timeout: given}, 2 * time.Second},
		{"sleep", v1alpha1.Step{Sleep: &metav1.Duration{Duration: time.Hour}}, time.Hour + time.Minute},
		{"sleep", v1alpha1.Step{Sleep: &metav1.Duration{Duration: time.Hour}, Timeout: given}, 2 * time.Second},
		{"scale", v1alpha1.Step{Scale: &v1alpha1.ScaleStep{Name: "web"}}, time.Minute},
		{"scale", v1alpha1.Step{Scale: &v1alpha1.ScaleStep{NodeGroup: ptr.To("w")}}, 3 * time.Minute},
		{"deschedule", v1alpha1.Step{Deschedule: &v1alpha1.DescheduleStep{}}, 3 * time.Minute},
		{"federate", v1alpha1.Step{Federate: []string{"a", "b"}}, time.Minute},
	} {
		if got := kind(c.kind).timeoutOf(&c.step); got != c.want {
			t.Errorf("%s (timeout %v): %s, want %s", c.kind, c.step.Timeout, got, c.want)
		}
	}
}
