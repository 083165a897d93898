package scenario

import (
	"strings"
	"testing"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

// A usage step's faults are found when the file is read, each in one line
// naming the field.
func TestUsageStepErrors(t *testing.T) {
	for _, tc := range []struct{ step, want string }{
		{"usage: {selector: app=web}", `:4: steps[0].usage: give cpu or memory (or both), e.g. cpu: 900m`},
		{"usage: {selector: 'app in (web', cpu: 900m}", `:4: steps[0].usage: selector: "app in (web" is not a label selector`},
		{"usage: {selector: app=web, cpu: lots}", `:4: steps[0].usage: cpu: "lots" is not a quantity; write it as 900m, 1.5 or 200Mi`},
		{"usage: {selector: app=web, memory: -200Mi}", `:4: steps[0].usage: memory: -200Mi is negative; give a usage of 0 or more`},
		{"usage: {selector: app=web, cpu: {expression: 'Quantity(\"1\") +'}}", `:4: steps[0].usage: cpu: expression: `},
		{"usage: {selector: app=web, cpu: {value: 1, expression: 'Quantity(\"1\")'}}", `:4: steps[0].usage: cpu: give a quantity (900m) or {expression: ...}, one of them`},
		{"usage: {selector: app=web, cpu: {expresion: x}}", `want a quantity (900m), {value: 900m} or {expression: ...}`},
		{"usage: {selector: 'app>1', cpu: 1}", `:4: steps[0].usage: selector: "app>1" is not a label selector (app>1: select by =, !=, in, notin, exists or !exists)`},
		{"usage: {selector: app=web, cpus: 1}", `:4: unknown field "steps[0].usage.cpus"`},
	} {
		_, err := load(t, head+"steps:\n- "+tc.step+"\n", nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant %s", tc.step, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("error spans lines: %q", err)
		}
	}
}

// A usage step's ClusterResourceUsage: what it selects and declares, and
// a name that stays the same for the same pods, so a later step for them
// replaces it.
func TestUsageStepObject(t *testing.T) {
	f, err := load(t, head+`name: spike
steps:
- usage: {selector: app=web, cpu: 900m, memory: 200Mi}
- usage: {selector: app=web, namespace: default, cpu: {expression: 'pod.SinceSecond() < 60.0 ? Quantity("900m") : Quantity("200m")'}}
- usage: {selector: 'app=web,tier!=db', namespace: '*', cpu: 1}
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	steps := f.Scenario.Steps
	spec, err := usageSpec(steps[0].Usage)
	if err != nil {
		t.Fatal(err)
	}
	u := spec.Usages[0].Usage
	if sel := spec.Selector; len(sel.MatchNamespaces) != 1 || sel.MatchNamespaces[0] != "default" || len(sel.MatchExpressions) != 1 ||
		sel.MatchExpressions[0].Key != "app" || sel.MatchExpressions[0].Values[0] != "web" ||
		u["cpu"].Value.String() != "900m" || u["memory"].Value.String() != "200Mi" {
		t.Errorf("spec %+v, usage %+v", spec.Selector, u)
	}
	if spec, _ := usageSpec(steps[1].Usage); spec.Usages[0].Usage["cpu"].Expression == nil {
		t.Errorf("expression lost: %+v", spec.Usages[0].Usage)
	}
	spec, _ = usageSpec(steps[2].Usage)
	if sel := spec.Selector; len(sel.MatchNamespaces) != 0 || len(sel.MatchExpressions) != 2 || sel.MatchExpressions[1].Operator != "NotIn" || spec.Usages[0].Usage["cpu"].Value.String() != "1" {
		t.Errorf("every namespace, app=web,tier!=db: %+v", sel)
	}
	a, b, c := usageName("spike", steps[0].Usage), usageName("spike", steps[1].Usage), usageName("spike", steps[2].Usage)
	if a != b || a == c || !strings.HasPrefix(a, "spike-default-app-web-") || !strings.HasPrefix(c, "spike-all-app-web-tier-db-") {
		t.Errorf("names %s %s %s: want the first two the same", a, b, c)
	}
	if other := usageName("spike", &v1alpha1.UsageStep{Selector: "app!=web"}); other == a {
		t.Errorf("app!=web and app=web share the name %s", a)
	}
}
