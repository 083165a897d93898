package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/kubesim/kubesim/internal/scenario/result"
)

func writeHTML(t *testing.T, results []*result.Scenario) string {
	t.Helper()
	var page bytes.Buffer
	if err := WriteHTML(&page, results); err != nil {
		t.Fatal(err)
	}
	return page.String()
}

func TestHTMLDrawsPlacementsAndFetchesNothing(t *testing.T) {
	page := writeHTML(t, sampleResults())
	for _, want := range []string{"<svg", "bad &lt;one&gt;", "expected: 1", "evicted so far", "pending (1)", `<div class="step failed">`} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, banned := range []string{"http://", "https://cdn", "<link", "src="} {
		if strings.Contains(strings.ReplaceAll(page, `xmlns="http://www.w3.org/2000/svg"`, ""), banned) {
			t.Errorf("report fetches something: %q", banned)
		}
	}
}

// A step's output (kubectl's) shows where its detail would.
func TestHTMLShowsAFailedStepsOutput(t *testing.T) {
	results := sampleResults()
	results[0].Steps[1].Detail, results[0].Steps[1].Output = "", "NAME READY\n"
	if !strings.Contains(writeHTML(t, results), "<div><small>NAME READY\n</small></div>") {
		t.Error("the output is not shown")
	}
}

// A drain's waves are a table: nodes, evictions, each refusal with its
// budget and how long, the wall time; then the pods left Pending and why.
func TestHTMLShowsADrainsWaves(t *testing.T) {
	r := &result.Scenario{Name: "s", File: "s.yaml", Duration: 70 * time.Second, Steps: []*result.Step{
		{Name: "rehearse", Action: "drain", Line: 3, Start: time.Second, Duration: 65 * time.Second, Drain: sampleDrain()}}}
	page := writeHTML(t, []*result.Scenario{r})
	for _, want := range []string{
		"surge: node group <b>new</b> +2 (new-0, new-1), Ready after 2.1s",
		"<td>1/2</td><td>old-0, old-1</td>",
		"<summary>3</summary><small>default/web-a, default/web-b, default/db-0</small>",
		`<div class="refusal"><b>default/web-b</b> by PDB <b>web</b> for <b>1.4s</b>, then evicted</div>`,
		`<div class="refusal still"><b>default/solo</b> by PDB <b>solo</b> for <b>59.0s</b>, still refused at the end</div>`,
		`<div class="wbar" style="width:100.00%"></div>60.0s`,
		"left Pending (1)",
		"<td>default/legacy-x</td><td>0/5 nodes are available: 3 node(s) didn&#39;t match Pod&#39;s node affinity/selector",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
