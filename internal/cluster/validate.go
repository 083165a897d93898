package cluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"

	"k8s.io/apiserver/pkg/audit/policy"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/controlplane"
	"github.com/kubesim/kubesim/internal/descheduler"
	"github.com/kubesim/kubesim/internal/kubeversion"
)

// validate checks a defaulted config, and settles the Kubernetes version
// it names (Cluster.Kubernetes); each error names the field at fault.
func validate(c *v1alpha1.Cluster) error {
	if err := c.Validate(); err != nil {
		return err
	}
	v, err := kubeversion.Lookup(c.Kubernetes)
	if err != nil {
		return err
	}
	c.Kubernetes = v.Minor
	return validateExtraArgs(v, c.ExtraArgs)
}

// validateExtraArgs checks that extra arguments go to upstream components
// and that each component's own flags take them.
func validateExtraArgs(v kubeversion.Version, extra map[string][]string) error {
	names := make([]string, 0, len(extra))
	for name := range extra {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !slices.Contains(controlplane.UpstreamComponents, name) {
			return fmt.Errorf("extraArgs.%s: not an upstream component; use %s", name, strings.Join(controlplane.UpstreamComponents, ", "))
		}
		for i, arg := range extra[name] {
			if !strings.HasPrefix(arg, "--") || len(arg) < 3 {
				return fmt.Errorf("extraArgs.%s[%d]: %q is not a flag; write it as --name=value, e.g. --feature-gates=SomeGate=true", name, i, arg)
			}
		}
		if err := checkUpstreamFlags(v, name, extra[name]); err != nil {
			return fmt.Errorf("extraArgs.%s: %v (kubesim component %s --help lists its flags)", name, err, name)
		}
	}
	return nil
}

// checkUpstreamFlags asks the component itself, of the cluster's version,
// whether its flags take args, so a misspelt or ill-typed flag is reported
// now rather than as a component that never starts. It asks a process of
// its own: upstream commands set up their signal handling as they are
// built.
func checkUpstreamFlags(v kubeversion.Version, component string, args []string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	prog, cmdline, err := v.Command(exe, component, append(slices.Clone(args), "--help"))
	if err != nil {
		return err
	}
	out, err := exec.Command(prog, cmdline...).CombinedOutput()
	if err == nil {
		return nil
	}
	for _, line := range strings.Split(string(out), "\n") {
		if msg, ok := strings.CutPrefix(line, "Error: "); ok {
			return errors.New(msg)
		}
	}
	return err
}

// readAuditPolicy reads and checks a user's audit policy, so a bad one is
// reported now rather than as an API server that never starts.
func readAuditPolicy(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auditPolicy: %w", err)
	}
	if _, err := policy.LoadPolicyFromBytes(data); err != nil {
		return nil, fmt.Errorf("auditPolicy: %s is not a valid audit.k8s.io/v1 Policy: %w", path, err)
	}
	return data, nil
}

// checkExplicitPort fails early if the port the user asked for is taken.
func checkExplicitPort(c *v1alpha1.Cluster) error {
	if p := c.Networking.APIServerPort; p != 0 && !controlplane.PortFree(p) {
		return fmt.Errorf("networking.apiServerPort: port %d is in use by another process; choose another or 0 for any", p)
	}
	return nil
}

// resolveDeschedulerPolicy reads the policy file, or expands the profiles,
// and checks the result with the descheduler's own validation.
func resolveDeschedulerPolicy(ds v1alpha1.Descheduler) ([]byte, error) {
	return descheduler.ResolvePolicy(ds.Policy, ds.Profiles,
		descheduler.PolicyFields{Policy: "descheduler.policy", Profiles: "descheduler.profiles"})
}
