package scenario

import (
	"errors"
	"strings"
	"time"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/kubeversion"
)

func init() {
	stepKinds.register(&stepKind{
		name: "upgrade",
		validate: func(s *v1alpha1.Step, _ clusterNames) error {
			if s.Upgrade.Kubernetes == "" {
				return errors.New("kubernetes: give the minor version to upgrade to, such as 1.36")
			}
			if _, err := kubeversion.Lookup(s.Upgrade.Kubernetes); err != nil {
				return errors.New("kubernetes: " + strings.TrimPrefix(err.Error(), kubeversion.FieldPrefix))
			}
			return nil
		},
		timeout: func(*v1alpha1.Step) time.Duration { return upgradeTimeout },
		do: func(x *stepRun) (string, error) {
			err := x.r.o.Provider.UpgradeKubernetes(x.ctx, x.t.name, x.step.Upgrade.Kubernetes, upgradeTimeout)
			if err != nil {
				return "", errors.New(strings.TrimPrefix(err.Error(), kubeversion.FieldPrefix))
			}
			v, _ := kubeversion.Lookup(x.step.Upgrade.Kubernetes)
			return "the control plane runs Kubernetes " + v.Release, nil
		},
	})
}

// upgradeTimeout bounds an upgrade step that gives no timeout: three
// components restarted one after another, each waited for.
const upgradeTimeout = 3 * time.Minute
