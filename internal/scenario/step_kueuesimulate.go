package scenario

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterclock"
	"github.com/kubesim/kubesim/internal/kueuefit"
	"github.com/kubesim/kubesim/internal/manifest"
)

func init() {
	stepKinds.register(&stepKind{
		name: "kueueSimulate",
		setDefaults: func(s *v1alpha1.Step, dir string) {
			k := s.KueueSimulate
			if k.File != "" {
				k.File = resolve(dir, k.File)
			}
			if k.Namespace == "" {
				k.Namespace = "default"
			}
		},
		validate: func(s *v1alpha1.Step, _ clusterNames) error {
			k := s.KueueSimulate
			if k.Expect != "" && !slices.Contains(kueuefit.Verdicts, kueuefit.Verdict(k.Expect)) {
				return fmt.Errorf("expect: %q is no verdict of Kueue's; use one of %s", k.Expect, verdictList())
			}
			if k.Why != "" && k.Expect != string(kueuefit.Pending) {
				return fmt.Errorf("why: is Kueue's reason for a pending Job; set expect: pending with it")
			}
			_, err := simulatedJob(k)
			return err
		},
		// A copy of the cluster is made and started for the question: real
		// work, so its default is 3 minutes of real time on any clock.
		timeout: func(*v1alpha1.Step) time.Duration { return clusterclock.Stretch(3 * time.Minute) },
		check:   true,
		do:      func(x *stepRun) (string, error) { return x.kueueSimulate() },
	})
}

func verdictList() string {
	s := make([]string, len(kueuefit.Verdicts))
	for i, v := range kueuefit.Verdicts {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}

// simulatedJob is the step's Job, from its file or inline.
func simulatedJob(k *v1alpha1.KueueSimulateStep) (*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	switch {
	case k.File != "" && k.Resource != nil:
		return nil, fmt.Errorf("give file or resource, not both")
	case k.File != "":
		var err error
		if objs, err = manifest.ReadObjects(k.File); err != nil {
			return nil, err
		}
	case k.Resource != nil:
		data, err := json.Marshal(k.Resource)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return nil, fmt.Errorf("resource: %v", err)
		}
		objs = append(objs, u)
	default:
		return nil, fmt.Errorf("give file or resource: the Job to ask Kueue about")
	}
	return kueuefit.Job(objs, k.Namespace)
}

// kueueSimulate asks Kueue, in a copy of the step's cluster, and checks
// its answer against the step's expect.
func (x *stepRun) kueueSimulate() (string, error) {
	k := x.step.KueueSimulate
	job, err := simulatedJob(k)
	if err != nil {
		return "", err
	}
	a, err := kueuefit.Simulate(x.ctx, x.r.o.Provider, x.t.name, job)
	if err != nil {
		return "", err
	}
	detail := fmt.Sprintf("Kueue: %s %s", a.Job, a.Verdict)
	if a.Why != "" && a.Verdict != kueuefit.Admitted {
		detail += ": " + a.Why
	}
	for _, v := range a.Preempted {
		detail += fmt.Sprintf("; preempts %s/%s (%s)", v.Namespace, v.Name, v.Reason)
	}
	if k.Expect != "" && string(a.Verdict) != k.Expect {
		return detail, fmt.Errorf("expected %s; %s", k.Expect, detail)
	}
	if k.Why != "" && !strings.Contains(a.Why, k.Why) {
		return detail, fmt.Errorf("expected Kueue's reason to contain %q; %s", k.Why, detail)
	}
	return detail, nil
}
