package scenario

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/manifest"
	"github.com/kubesim/kubesim/internal/scale"
)

// errAt is an error at a line of the scenario file (a step's).
func errAt(line int, format string, args ...any) error {
	return &manifest.Error{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// validate checks what decoding cannot: one action per step, clusters
// that exist, files that can be read, selectors and CEL that parse. It
// changes nothing; setDefaults has filled in the scenario before.
func validate(s *v1alpha1.Scenario, root *yaml.Node) error {
	if s.Cluster != nil && len(s.Clusters) > 0 {
		return lineError(child(root, "clusters"), "cluster and clusters: set one or the other")
	}
	clusters := s.Clusters
	if s.Cluster != nil {
		clusters = []v1alpha1.ScenarioCluster{*s.Cluster}
	}
	names := clusterNames{}
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
		field := "cluster"
		if s.Cluster == nil {
			field = fmt.Sprintf("clusters[%d]", i)
		}
		// timeScale: 0 reads as none, real time: refused, as
		// --time-scale 0 is, rather than taken for what was not asked.
		if n, given := manifest.Lookup(at, "timeScale"); given && c.TimeScale == 0 {
			return lineError(n, "%s.timeScale: %v", field, v1alpha1.CheckTimeScale(0))
		}
		if err := validateCluster(c); err != nil {
			// The error starts with the field's path in the cluster: its
			// line is the field's, where the file gives it.
			return lineError(find(at, leadingPath.FindString(err.Error())), "%s.%v", field, err)
		}
	}
	if err := validateSteps(s.Steps, "steps", names); err != nil {
		return err
	}
	if err := checkSince(s.Steps); err != nil {
		return err
	}
	specs := map[string]*v1alpha1.ScenarioCluster{}
	for i := range clusters {
		specs[clusters[i].Name] = &clusters[i]
	}
	return checkSurgeGroups(s.Steps, "steps", specs)
}

// leadingPath is the field path an error starts with (networking.podSubnet,
// nodeGroups[1].template).
var leadingPath = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*(\[\d+\]|\.[A-Za-z][A-Za-z0-9]*)*`)

// notInScenario are the options (ClusterSpec fields) a scenario's cluster
// cannot set, each with the reason; it takes every other one as a Cluster
// file does.
var notInScenario = []struct {
	field  string
	set    func(*v1alpha1.ClusterSpec) bool
	reason string
}{
	{"nodes", func(s *v1alpha1.ClusterSpec) bool { return s.Nodes != 0 },
		"a scenario's nodes are its nodeGroups, which the run makes once the cluster is up; nodes: N is nodeGroups: [{count: N}]"},
	{"nodeTemplate", func(s *v1alpha1.ClusterSpec) bool { return s.NodeTemplate != "" },
		"a scenario's nodes are its nodeGroups; give the group a template"},
	{"disableKubeletSim", func(s *v1alpha1.ClusterSpec) bool { return s.DisableKubeletSim },
		"the run waits for its nodes to be Ready, which only the kubelet simulator makes them"},
}

func validateCluster(c *v1alpha1.ScenarioCluster) error {
	if c.Existing != "" {
		if !reflect.DeepEqual(c.ClusterSpec, v1alpha1.ClusterSpec{}) {
			return fmt.Errorf("existing: a cluster used as it is takes no nodeGroups or options")
		}
		return v1alpha1.ValidateName(c.Existing)
	}
	for _, f := range notInScenario {
		if f.set(&c.ClusterSpec) {
			return fmt.Errorf("%s: not in a scenario: %s", f.field, f.reason)
		}
	}
	opts := ClusterConfig(c, "scenario")
	opts.SetDefaults()
	if err := opts.Validate(); err != nil {
		return err
	}
	if err := v1alpha1.ValidateNodeGroups("nodeGroups", c.NodeGroups); err != nil {
		return err
	}
	// Files the cluster is made with are read then; one missing is an
	// error now, before any cluster is made.
	if c.AuditPolicy != "" {
		if _, err := os.Stat(c.AuditPolicy); err != nil {
			return fmt.Errorf("auditPolicy: %w", err)
		}
	}
	for i, f := range c.StageFiles {
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("stageFiles[%d]: %w", i, err)
		}
	}
	for i := range c.NodeGroups {
		g := &c.NodeGroups[i]
		if g.Template != "" {
			data, err := os.ReadFile(g.Template)
			if err != nil {
				return fmt.Errorf("nodeGroups[%d].template: %w", i, err)
			}
			if _, err := scale.ParseTemplate(data); err != nil {
				return fmt.Errorf("nodeGroups[%d].template %w", i, manifest.InFile(g.Template, err))
			}
		}
	}
	return nil
}

// ClusterConfig is the Cluster a scenario cluster is made as.
func ClusterConfig(c *v1alpha1.ScenarioCluster, name string) *v1alpha1.Cluster {
	spec := c.ClusterSpec.DeepCopy()
	spec.NodeGroups = nil // the run makes them once the cluster is up (makeNodes)
	return &v1alpha1.Cluster{Name: name, ClusterSpec: *spec}
}

// clusterNames are the names steps may give as cluster: ("" when the
// scenario has one cluster).
type clusterNames map[string]bool

func (c clusterNames) sorted() []string { return sortedKeys(c) }

// validateSteps checks each step and those it runs.
func validateSteps(steps []v1alpha1.Step, path string, clusters clusterNames) error {
	return eachStep(steps, path, func(s *v1alpha1.Step, at string) error {
		k, err := stepKinds.one(s)
		if err != nil {
			return errAt(s.Line, "%s: %s", at, err)
		}
		if err := validateStepCluster(s, k, clusters); err != nil {
			return errAt(s.Line, "%s.%s", at, err)
		}
		if s.Timeout != nil && s.Timeout.Duration <= 0 {
			return errAt(s.Line, "%s.timeout: must be a positive duration such as 30s", at)
		}
		if k.validate != nil {
			if err := k.validate(s, clusters); err != nil {
				return errAt(s.Line, "%s.%s", at, fieldMessage(k.name, err))
			}
		}
		return nil
	})
}

// validateStepCluster checks a step's cluster: as its kind's scope wants it.
func validateStepCluster(s *v1alpha1.Step, k *stepKind, clusters clusterNames) error {
	switch k.scope {
	case onNamedClusters:
		if s.Cluster != "" {
			return fmt.Errorf("cluster: a %s step acts on the clusters it names; remove cluster: %s", k.name, s.Cluster)
		}
		return nil
	case onItsSteps:
		if s.Cluster == "" {
			return nil // each of its steps names its own
		}
	}
	switch {
	case clusters[s.Cluster]:
		return nil
	case s.Cluster == "":
		return fmt.Errorf("cluster: required with several clusters; name one of %s", strings.Join(clusters.sorted(), ", "))
	}
	return fmt.Errorf("cluster: no cluster named %q in clusters:", s.Cluster)
}

// itemError is a fault in one item of a kind's list (federate[1]: …),
// where other errors are about the kind's field as a whole.
type itemError struct {
	index int
	err   error
}

func (e itemError) Error() string { return fmt.Sprintf("[%d]: %v", e.index, e.err) }

// fieldMessage is a validation error after the step's path:
// "drain: expect: …", or for one item "federate[1]: …".
func fieldMessage(name string, err error) string {
	var item itemError
	if errors.As(err, &item) {
		return fmt.Sprintf("%s[%d]: %v", name, item.index, item.err)
	}
	return fmt.Sprintf("%s: %v", name, err)
}

// parseSelector checks a label selector at parse time.
func parseSelector(s string) error {
	if s == "" {
		return nil
	}
	_, err := labels.Parse(s)
	return err
}

// parseSelectors checks each of the selectors in turn.
func parseSelectors(selectors ...string) error {
	for _, s := range selectors {
		if err := parseSelector(s); err != nil {
			return err
		}
	}
	return nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkSince checks that each window's since: names a step that runs
// before the assertion, so a misspelt name is an error now rather than a
// failure hours into a run.
func checkSince(steps []v1alpha1.Step) error {
	seen := map[string]bool{}
	return eachStep(steps, "steps", func(s *v1alpha1.Step, at string) error {
		for i := range s.Assert {
			a := &s.Assert[i]
			for _, w := range []struct {
				field, since string
			}{{"maxNodes", sinceOf(a.MaxNodes)}, {"maxDisrupting", sinceOf(a.MaxDisrupting)}, {"cost", costSince(a.Cost)}} {
				if w.since != "" && !seen[w.since] {
					return errAt(s.Line, "%s.assert[%d].%s.since: no step named %q before this one; give the name: of the step the window starts at", at, i, w.field, w.since)
				}
			}
		}
		if s.Name != "" {
			seen[s.Name] = true
		}
		return nil
	})
}

func sinceOf(b *v1alpha1.NodeBound) string {
	if b == nil {
		return ""
	}
	return b.Since
}

func costSince(c *v1alpha1.CostAssertion) string {
	if c == nil {
		return ""
	}
	return c.Since
}
