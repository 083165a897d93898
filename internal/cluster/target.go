package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/credentials"
)

// Target is the cluster a command acts on, and why that one.
type Target struct {
	Name string
	// Why says where the name came from: "--name", "current context
	// kubesim-NAME", or "default; " and why the current context was not
	// taken.
	Why string
	// gone is the cluster the current context is of, when it is gone
	// from this home (and Name the default instead).
	gone string
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
	name, gone, whyNot := p.currentContextCluster()
	if whyNot != "" {
		return Target{Name: v1alpha1.DefaultClusterName, Why: "default; " + whyNot, gone: gone}, nil
	}
	return Target{Name: name, Why: "current context " + credentials.ContextName(name)}, nil
}

// currentContextCluster is the cluster of the current context, or why
// that context is no kubesim cluster of this home. A context is one when
// it is called kubesim-NAME, this home has a cluster NAME, and the
// context's cluster trusts that cluster's CA: a context of the same name
// left by a cluster since deleted and made anew, or of another home, is
// not taken for it.
// gone is the cluster of a kubesim context that has none in this home.
func (p *Provider) currentContextCluster() (name, gone, whyNot string) {
	cfg, err := p.pathOptions().GetStartingConfig()
	if err != nil {
		return "", "", fmt.Sprintf("kubeconfig %s cannot be read: %v", p.UserKubeconfig(), oneLine(err))
	}
	current := cfg.CurrentContext
	if current == "" {
		return "", "", "no current context"
	}
	name, ours := strings.CutPrefix(current, credentials.ContextName(""))
	ctx := cfg.Contexts[current]
	if !ours || ctx == nil || v1alpha1.ValidateName(name) != nil {
		return "", "", fmt.Sprintf("current context %q is not a kubesim cluster's", current)
	}
	d, _, err := p.open(name)
	if err != nil {
		return "", name, fmt.Sprintf("current context %s: no cluster %q in %s", current, name, p.Home)
	}
	ca, err := os.ReadFile(credentials.CAFile(d))
	if entry := cfg.Clusters[ctx.Cluster]; err != nil || entry == nil || !bytes.Equal(entry.CertificateAuthorityData, ca) {
		return "", "", fmt.Sprintf("current context %s is not cluster %q of %s (another CA)", current, name, p.Home)
	}
	return name, "", ""
}

// Missing is err, a command's error, said better when it is that t does
// not exist and t was no choice of the user's (no --name): the clusters
// there are and how to choose one, rather than that the default one is
// not there. Deleting the current context's cluster also unsets the
// current context (as kind does), so a next command falls back to the
// default, often gone too.
func (p *Provider) Missing(t Target, err error) error {
	if t.Why == "--name" || !errors.Is(err, clusterdir.ErrNotExist) {
		return err
	}
	names, listErr := clusterdir.List(p.Home)
	switch {
	case listErr != nil:
		return err
	case len(names) == 0:
		return fmt.Errorf("cluster %q does not exist, and there are no clusters (kubesim create cluster makes one)", t.Name)
	}
	choose := fmt.Sprintf("clusters: %s (use --name or kubectl config use-context %s)", strings.Join(names, ", "), credentials.ContextName(names[0]))
	why := strings.TrimPrefix(t.Why, "default; ")
	switch {
	case t.gone != "":
		why = fmt.Sprintf("the current context's cluster %q is gone", t.gone)
	case why == "no current context":
		why += " (deleting the current context's cluster unsets it)"
	}
	return fmt.Errorf("%s, and there is no cluster %q to default to; %s", why, t.Name, choose)
}

func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }
