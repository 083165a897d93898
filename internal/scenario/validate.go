package scenario

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/descheduler"
	"github.com/kubesim/kubesim/internal/scale"
)

func errAt(line int, format string, args ...any) error {
	return fmt.Errorf("%d: %s", line, fmt.Sprintf(format, args...))
}

// validate checks what decoding cannot: one action per step, clusters
// that exist, files that can be read, selectors and CEL that parse.
// Relative paths are made relative to dir, the scenario's directory.
func validate(s *v1alpha1.Scenario, root *yaml.Node, dir string) error {
	switch {
	case s.Cluster != nil && len(s.Clusters) > 0:
		return lineError(child(root, "clusters"), "cluster and clusters: set one or the other")
	case s.Cluster == nil && len(s.Clusters) == 0:
		s.Cluster = &v1alpha1.ScenarioCluster{}
	}
	clusters := s.Clusters
	if s.Cluster != nil {
		clusters = []v1alpha1.ScenarioCluster{*s.Cluster}
	}
	names := map[string]bool{}
	for i := range clusters {
		c := &clusters[i]
		at := child(root, "cluster")
		if s.Cluster == nil {
			at = child(root, "clusters").Content[i]
		}
		if len(clusters) > 1 && c.Name == "" {
			return lineError(at, "clusters[%d].name: required when there are several clusters", i)
		}
		if names[c.Name] {
			return lineError(at, "clusters[%d].name: %q is used twice", i, c.Name)
		}
		names[c.Name] = true
		if err := validateCluster(c, dir); err != nil {
			return lineError(at, "%s", err)
		}
	}
	if s.Cluster != nil {
		*s.Cluster = clusters[0]
	}
	return validateSteps(s.Steps, "steps", names, dir)
}

func validateCluster(c *v1alpha1.ScenarioCluster, dir string) error {
	if c.Existing != "" {
		if len(c.NodeGroups) > 0 || c.Stages != "" || c.DisableDPDBController {
			return fmt.Errorf("existing: a cluster used as it is takes no nodeGroups or options")
		}
		return v1alpha1.ValidateName(c.Existing)
	}
	opts := ClusterConfig(c, "scenario")
	opts.SetDefaults()
	if err := opts.Validate(); err != nil {
		return err
	}
	if err := v1alpha1.ValidateNodeGroups("nodeGroups", c.NodeGroups); err != nil {
		return err
	}
	for i := range c.NodeGroups {
		g := &c.NodeGroups[i]
		if g.Template != "" {
			g.Template = resolve(dir, g.Template)
			data, err := os.ReadFile(g.Template)
			if err != nil {
				return fmt.Errorf("nodeGroups[%d].template: %w", i, err)
			}
			if _, err := scale.ParseTemplate(data); err != nil {
				return fmt.Errorf("nodeGroups[%d].template %s: %w", i, g.Template, err)
			}
		}
	}
	return nil
}

// ClusterConfig is the Cluster a scenario cluster is made as.
func ClusterConfig(c *v1alpha1.ScenarioCluster, name string) *v1alpha1.Cluster {
	return &v1alpha1.Cluster{
		Name:          name,
		Stages:        c.Stages,
		NodeLifecycle: *c.NodeLifecycle.DeepCopy(),
		Scheduler:     *c.Scheduler.DeepCopy(),
		Descheduler:   *c.Descheduler.DeepCopy(),
		ExtraArgs:     c.ExtraArgs,

		DisableDPDBController: c.DisableDPDBController,
	}
}

func resolve(dir, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dir, path)
}

func validateSteps(steps []v1alpha1.Step, path string, clusters map[string]bool, dir string) error {
	for i := range steps {
		s := &steps[i]
		at := fmt.Sprintf("%s[%d]", path, i)
		actions := s.Actions()
		switch len(actions) {
		case 0:
			return errAt(s.Line, "%s: no action; give one of %s", at, strings.Join(v1alpha1.StepActions, ", "))
		case 1:
		default:
			return errAt(s.Line, "%s: has %s; one action per step (split it into several steps)", at, strings.Join(actions, " and "))
		}
		if s.Federate != nil {
			if err := validateFederate(s, clusters); err != nil {
				return errAt(s.Line, "%s.%s", at, err)
			}
			continue
		}
		if s.Foreach != nil {
			// A foreach acts on no cluster: its cluster and name are its
			// steps' defaults.
			if s.Cluster != "" && !clusters[s.Cluster] {
				return errAt(s.Line, "%s.cluster: no cluster named %q in clusters:", at, s.Cluster)
			}
			for j := range s.Foreach.Steps {
				inner := &s.Foreach.Steps[j]
				if inner.Cluster == "" && inner.Federate == nil {
					inner.Cluster = s.Cluster
				}
				if inner.Name == "" {
					inner.Name = s.Name
				}
			}
		} else if !clusters[s.Cluster] {
			if s.Cluster == "" {
				return errAt(s.Line, "%s.cluster: required with several clusters; name one of %s", at, strings.Join(sortedKeys(clusters), ", "))
			}
			return errAt(s.Line, "%s.cluster: no cluster named %q in clusters:", at, s.Cluster)
		}
		if s.Timeout != nil && s.Timeout.Duration <= 0 {
			return errAt(s.Line, "%s.timeout: must be a positive duration such as 30s", at)
		}
		if err := validateStep(s, dir); err != nil {
			return errAt(s.Line, "%s.%s: %s", at, actions[0], err)
		}
		if s.Foreach != nil {
			if err := validateSteps(s.Foreach.Steps, at+".foreach.steps", clusters, dir); err != nil {
				return err
			}
		}
	}
	return nil
}

func validateStep(s *v1alpha1.Step, dir string) error {
	switch {
	case s.Apply != nil:
		return validateApply(s.Apply, dir)
	case s.Delete != nil:
		return validateApply(s.Delete, dir)
	case s.Scale != nil:
		if (s.Scale.NodeGroup == nil) == (s.Scale.Name == "") {
			return fmt.Errorf("give name (a workload) or nodeGroup, one of them")
		}
		if s.Scale.Replicas < 0 {
			return fmt.Errorf("replicas: must be 0 or more")
		}
	case s.Label != nil:
		return validateNodes(s.Label.Nodes)
	case s.Taint != nil:
		return validateNodes(s.Taint.Nodes)
	case s.Cordon != nil:
		return validateNodes(*s.Cordon)
	case s.Uncordon != nil:
		return validateNodes(*s.Uncordon)
	case s.NodeStop != nil:
		return validateNodes(*s.NodeStop)
	case s.NodeStart != nil:
		return validateNodes(*s.NodeStart)
	case s.Drain != nil:
		if !slices.Contains([]string{"", "completes", "blocked"}, s.Drain.Expect) {
			return fmt.Errorf("expect: %q; use completes or blocked", s.Drain.Expect)
		}
		return validateNodes(s.Drain.Node)
	case s.Evict != nil:
		if !slices.Contains([]string{"", "allowed", "refused"}, s.Evict.Expect) {
			return fmt.Errorf("expect: %q; use allowed or refused", s.Evict.Expect)
		}
		if (s.Evict.Pod == "") == (s.Evict.Selector == "") {
			return fmt.Errorf("give pod (a name) or selector, one of them")
		}
		return parseSelector(s.Evict.Selector)
	case s.Deschedule != nil:
		if s.Deschedule.Policy != "" {
			s.Deschedule.Policy = resolve(dir, s.Deschedule.Policy)
		}
		_, err := descheduler.ResolvePolicy(s.Deschedule.Policy, s.Deschedule.Profiles,
			descheduler.PolicyFields{Policy: "policy", Profiles: "profiles"})
		return err
	case s.Wait != nil:
		if s.Wait.Evictions != nil {
			return fmt.Errorf("evictions: only an assert can check them (they do not change while waiting)")
		}
		return validateAssertion(&s.Wait.Assertion)
	case s.Sleep != nil:
		if s.Sleep.Duration <= 0 {
			return fmt.Errorf("must be a positive duration such as 5s")
		}
	case s.Assert != nil:
		for i := range s.Assert {
			if err := validateAssertion(&s.Assert[i]); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
	case s.Kubectl != nil:
		if len(s.Kubectl) == 0 {
			return fmt.Errorf("give kubectl's arguments, such as get pods -o wide")
		}
	case s.Foreach != nil:
		if len(s.Foreach.Values) == 0 {
			return fmt.Errorf("values: required")
		}
	}
	return nil
}

func validateApply(a *v1alpha1.ApplyStep, dir string) error {
	if a.File != "" {
		a.Files = append([]string{a.File}, a.Files...)
		a.File = ""
	}
	if a.Resource != nil {
		a.Resources = append([]v1alpha1.Object{a.Resource}, a.Resources...)
		a.Resource = nil
	}
	if len(a.Files) == 0 && len(a.Resources) == 0 {
		return fmt.Errorf("give file, files, resource or resources")
	}
	for i, f := range a.Files {
		a.Files[i] = resolve(dir, f)
		if _, err := readObjects(a.Files[i]); err != nil {
			return err
		}
	}
	for i, r := range a.Resources {
		if r["apiVersion"] == nil || r["kind"] == nil {
			return fmt.Errorf("resources[%d]: apiVersion and kind are required", i)
		}
	}
	return nil
}

func validateNodes(n v1alpha1.NodeRef) error {
	if len(n.Names) == 0 && n.Selector == "" {
		return fmt.Errorf("name the nodes: a name, a list of names, or {selector: k=v}")
	}
	return parseSelector(n.Selector)
}

func validateAssertion(a *v1alpha1.Assertion) error {
	kinds := a.Kinds()
	switch len(kinds) {
	case 0:
		return fmt.Errorf("no check; give one of %s", strings.Join(v1alpha1.AssertionKinds, ", "))
	case 1:
	default:
		return fmt.Errorf("has %s; one check per assertion (make it a list item each)", strings.Join(kinds, " and "))
	}
	var sel []string
	switch {
	case a.Pods != nil:
		sel = []string{a.Pods.Selector, a.Pods.NodeSelector}
	case a.Spread != nil:
		if a.Spread.TopologyKey == "" {
			return fmt.Errorf("spread.topologyKey: required, such as topology.kubernetes.io/zone")
		}
		sel = []string{a.Spread.Selector, a.Spread.NodeSelector}
	case a.PerNode != nil:
		sel = []string{a.PerNode.Selector}
	case a.OnlyOn != nil:
		sel = []string{a.OnlyOn.Selector, a.OnlyOn.Nodes.Selector}
	case a.Nodes != nil:
		sel = []string{a.Nodes.Nodes.Selector}
	case a.PDB != nil:
		return validatePDB("pdb", a.PDB)
	case a.DPDB != nil:
		return validatePDB("dpdb", a.DPDB)
	case a.Object != nil:
		if a.Object["apiVersion"] == nil || a.Object["kind"] == nil {
			return fmt.Errorf("object: apiVersion and kind are required")
		}
	case a.CEL != "":
		if _, err := compileCEL(a.CEL); err != nil {
			return fmt.Errorf("cel: %s", oneLine(err.Error()))
		}
	}
	for _, s := range sel {
		if err := parseSelector(s); err != nil {
			return err
		}
	}
	return nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// validateFederate checks a federate step: two or more of the scenario's
// clusters, each once; the step acts on them all, so no cluster: of its own.
func validateFederate(s *v1alpha1.Step, clusters map[string]bool) error {
	if s.Cluster != "" {
		return fmt.Errorf("cluster: a federate step acts on the clusters it names; remove cluster: %s", s.Cluster)
	}
	if len(s.Federate) < 2 {
		return fmt.Errorf("federate: name two or more of the scenario's clusters, such as [red, blue, green]")
	}
	for i, name := range s.Federate {
		if !clusters[name] || name == "" {
			return fmt.Errorf("federate[%d]: no cluster named %q in clusters: (%s)", i, name, strings.Join(sortedKeys(clusters), ", "))
		}
		if slices.Contains(s.Federate[:i], name) {
			return fmt.Errorf("federate[%d]: %q is named twice", i, name)
		}
	}
	return nil
}

func validatePDB(kind string, p *v1alpha1.PDBAssertion) error {
	if p.Name != "" && len(p.Names) > 0 {
		return fmt.Errorf("%s: give name or names, not both", kind)
	}
	if p.DisruptionsAllowed == nil && p.CurrentHealthy == nil {
		return fmt.Errorf("%s: give disruptionsAllowed or currentHealthy, what to check", kind)
	}
	return nil
}
