package cluster

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/credentials"
)

// Target is the cluster a command acts on, and why that one.
type Target struct {
	Name string
	// Why says where the name came from: "--name", "current context
	// kubesim-NAME", or "default; " and why the current context was not
	// taken.
	Why string
}

// String is the line a command starts with: Cluster "pdb" (current context kubesim-pdb).
func (t Target) String() string { return fmt.Sprintf("Cluster %q (%s)", t.Name, t.Why) }

// Target is the one rule for which cluster a command acts on: the cluster
// named (given: the user gave --name, which always wins); else the cluster
// of the current context of the user's kubeconfig (p.Kubeconfig, else
// $KUBECONFIG, else ~/.kube/config, as kubectl reads them) when that
// context is a kubesim cluster of this home; else the default cluster,
// "kubesim".
func (p *Provider) Target(name string, given bool) (Target, error) {
	if given {
		if err := v1alpha1.ValidateName(name); err != nil {
			return Target{}, err
		}
		return Target{Name: name, Why: "--name"}, nil
	}
	name, whyNot := p.currentContextCluster()
	if whyNot != "" {
		return Target{Name: v1alpha1.DefaultClusterName, Why: "default; " + whyNot}, nil
	}
	return Target{Name: name, Why: "current context " + credentials.ContextName(name)}, nil
}

// currentContextCluster is the cluster of the current context, or why
// that context is no kubesim cluster of this home. A context is one when
// it is called kubesim-NAME, this home has a cluster NAME, and the
// context's cluster trusts that cluster's CA: a context of the same name
// left by a cluster since deleted and made anew, or of another home, is
// not taken for it.
func (p *Provider) currentContextCluster() (name, whyNot string) {
	cfg, err := p.pathOptions().GetStartingConfig()
	if err != nil {
		return "", fmt.Sprintf("kubeconfig %s cannot be read: %v", p.UserKubeconfig(), oneLine(err))
	}
	current := cfg.CurrentContext
	if current == "" {
		return "", "no current context"
	}
	name, ours := strings.CutPrefix(current, credentials.ContextName(""))
	ctx := cfg.Contexts[current]
	if !ours || ctx == nil || v1alpha1.ValidateName(name) != nil {
		return "", fmt.Sprintf("current context %q is not a kubesim cluster's", current)
	}
	d, _, err := p.open(name)
	if err != nil {
		return "", fmt.Sprintf("current context %s: no cluster %q in %s", current, name, p.Home)
	}
	ca, err := os.ReadFile(credentials.CAFile(d))
	if entry := cfg.Clusters[ctx.Cluster]; err != nil || entry == nil || !bytes.Equal(entry.CertificateAuthorityData, ca) {
		return "", fmt.Sprintf("current context %s is not cluster %q of %s (another CA)", current, name, p.Home)
	}
	return name, ""
}

func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }
