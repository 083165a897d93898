package cluster

import (
	"fmt"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubesim/kubesim/internal/controlplane"
	"github.com/kubesim/kubesim/internal/credentials"
	"github.com/kubesim/kubesim/internal/explain"
)

// Explainer returns a client of a running cluster's scheduler records and
// an admin client of its API server.
func (p *Provider) Explainer(name string) (*explain.Client, kubernetes.Interface, error) {
	d, c, err := p.openRunning(name)
	if err != nil {
		return nil, nil, err
	}
	if controlplane.ExplainPort(c) == 0 {
		return nil, nil, fmt.Errorf("cluster %q was started by a kubesim older than kubesim explain; restart it (kubesim stop cluster, kubesim start cluster) to explain its scheduling", name)
	}
	if pods := c.Scheduler.ExplainPods; pods != nil && *pods == 0 {
		return nil, nil, fmt.Errorf("cluster %q records no scheduling attempts: its scheduler.explainPods is 0", name)
	}
	cfg, err := credentials.AdminConfig(d)
	if err != nil {
		return nil, nil, err
	}
	tlsConfig, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nil, nil, err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	return explain.NewClient(controlplane.ExplainPort(c), tlsConfig), kube, nil
}
