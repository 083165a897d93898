package explain

import (
	"bytes"
	"strings"
	"testing"
)

func total(n int64) *int64 { return &n }

func sample() *Explanation {
	return &Explanation{
		Namespace: "default", Name: "web", Profile: "default-scheduler", Result: Scheduled, Node: "b",
		ScorePlugins: []ScorePlugin{{Name: "TaintToleration", Weight: 3}, {Name: "NodeResourcesFit", Weight: 1}},
		Nodes: []NodeResult{
			{Name: "b", Filter: Passed, Total: total(390), Scores: []PluginScore{{Plugin: "TaintToleration", Normalized: 100, Weighted: 300}, {Plugin: "NodeResourcesFit", Normalized: 90, Weighted: 90}}},
			{Name: "a", Filter: Passed, Total: total(350), Scores: []PluginScore{{Plugin: "TaintToleration", Normalized: 100, Weighted: 300}, {Plugin: "NodeResourcesFit", Normalized: 50, Weighted: 50}}},
			{Name: "bad", Filter: Rejected, Plugin: "TaintToleration", Reasons: []string{"node(s) had untolerated taint(s)"}},
			{Name: "far", Filter: NotEvaluated},
		},
	}
}

func TestPrintPod(t *testing.T) {
	var out bytes.Buffer
	if err := PrintPod(&out, sample(), 3); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{
		"Scheduled on b",
		"Decided: 40 points ahead of a, most from NodeResourcesFit (+40)",
		"b *", "TaintToleration: node(s) had untolerated taint(s)",
		"… 1 more nodes",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	// TaintToleration scores both scored nodes alike: no column for it.
	header := strings.Split(text, "\n")[6]
	if !strings.Contains(header, "NodeResourcesFit") || strings.Contains(header, "TaintToleration") {
		t.Errorf("header %q: want a column for the plugin that differs only", header)
	}
}

func TestPrintNode(t *testing.T) {
	var out bytes.Buffer
	if err := PrintNode(&out, sample(), "a"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "a was feasible and scored 350") || !strings.Contains(out.String(), "NodeResourcesFit  50") {
		t.Errorf("--node a:\n%s", out.String())
	}
	out.Reset()
	if err := PrintNode(&out, sample(), "far"); err != nil || !strings.Contains(out.String(), "percentageOfNodesToScore") {
		t.Errorf("--node far: %v\n%s", err, out.String())
	}
	if err := PrintNode(&out, sample(), "nosuch"); err == nil || !strings.HasPrefix(err.Error(), "--node:") {
		t.Errorf("--node nosuch: %v, want an error naming --node", err)
	}
}

func TestDecidedTie(t *testing.T) {
	e := sample()
	e.Nodes[0].Total = total(350)
	e.Nodes[0].Scores = e.Nodes[1].Scores
	d, ok := e.Decided()
	if !ok || d.Margin != 0 || d.Plugin != "" || len(d.Tied) != 1 || d.Tied[0] != "a" {
		t.Errorf("decided %+v, want a tie with a", d)
	}
	var out bytes.Buffer
	if err := PrintPod(&out, e, 3); err != nil {
		t.Fatal(err)
	}
	// v1.36's scheduler draws no random tie-breaker without extenders:
	// explain must not say it does.
	line := strings.Split(out.String(), "\n")[3]
	if !strings.HasPrefix(line, "Decided: a tie at 350 points with a (in the order scored)") || !strings.Contains(line, "not at random") {
		t.Errorf("the tie is told as %q", line)
	}
	if strings.Contains(out.String(), "broken at random") {
		t.Errorf("explain claims a random tie-break:\n%s", out.String())
	}
}
