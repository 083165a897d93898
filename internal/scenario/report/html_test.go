package report

import (
	"bytes"
	"strings"
	"testing"

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
