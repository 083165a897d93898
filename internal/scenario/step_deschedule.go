package scenario

import (
	"context"
	"fmt"
	"time"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/descheduler"
)

func init() {
	stepKinds.register(&stepKind{
		name: "deschedule",
		setDefaults: func(s *v1alpha1.Step, dir string) {
			if s.Deschedule.Policy != "" {
				s.Deschedule.Policy = resolve(dir, s.Deschedule.Policy)
			}
		},
		validate: func(s *v1alpha1.Step, _ clusterNames) error {
			_, err := descheduler.ResolvePolicy(s.Deschedule.Policy, s.Deschedule.Profiles, policyFields)
			return err
		},
		// A cycle lists every pod and node and evicts at the API's pace.
		timeout: func(*v1alpha1.Step) time.Duration { return descheduleTimeout },
		do:      func(x *stepRun) (string, error) { return x.t.deschedule(x.ctx, x.step.Deschedule) },
		picture: zoneGrouping,
	})
}

// descheduleTimeout bounds a deschedule step that gives no timeout.
const descheduleTimeout = 3 * time.Minute

// policyFields name a deschedule step's fields in the descheduler's messages.
var policyFields = descheduler.PolicyFields{Policy: "policy", Profiles: "profiles"}

func (t *target) deschedule(ctx context.Context, s *v1alpha1.DescheduleStep) (string, error) {
	policy, err := descheduler.ResolvePolicy(s.Policy, s.Profiles, policyFields)
	if err != nil {
		return "", err
	}
	report, err := descheduler.Run(ctx, descheduler.Options{Config: t.cfg, Policy: policy, DryRun: s.DryRun})
	if err != nil {
		return "", err
	}
	d := &disruption{What: "deschedule"}
	if s.DryRun {
		d.What = "deschedule (dry run)"
	}
	for _, e := range report.Evictions {
		key := e.Namespace + "/" + e.Pod
		switch e.Result {
		case descheduler.Evicted, descheduler.WouldEvict:
			d.Made = append(d.Made, key)
			if e.Result == descheduler.Evicted {
				t.evicted[key] = true
			}
		default:
			d.Refused = append(d.Refused, key)
		}
	}
	t.last = d
	verb := "evicted"
	if s.DryRun {
		verb = "would evict"
	}
	return fmt.Sprintf("%s %d, refused %d", verb, len(d.Made), len(d.Refused)), nil
}
