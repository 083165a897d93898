package report

import (
	"bytes"
	"encoding/xml"
	"reflect"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/internal/scenario/result"
)

// A test case per assertion and per wait; a failure says what was
// expected and shows the placement.
func TestJUnitHasACasePerAssertionAndWait(t *testing.T) {
	var x bytes.Buffer
	if err := WriteJUnit(&x, sampleResults()); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(x.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.Suites[0]
	if s.Tests != 3 || s.Failures != 1 || s.Cases[0].Name != "wait" || s.Cases[2].Failure == nil {
		t.Fatalf("junit: %+v", doc)
	}
	if text := s.Cases[2].Failure.Text; !strings.Contains(text, "expected: 1") || !strings.Contains(text, "n1               web×2") {
		t.Errorf("failure text:\n%s", text)
	}
}

// A drain gives a case for its surge, one per wave timed by its wall time,
// and one listing the pods left Pending; none fails by itself.
func TestJUnitHasACasePerDrainWave(t *testing.T) {
	r := &result.Scenario{Name: "s", Steps: []*result.Step{{Name: "rehearse", Action: "drain", Drain: sampleDrain()}}}
	var x bytes.Buffer
	if err := WriteJUnit(&x, []*result.Scenario{r}); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(x.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range doc.Suites[0].Cases {
		names = append(names, c.Name)
		if c.Failure != nil {
			t.Errorf("case %s fails", c.Name)
		}
	}
	want := []string{"rehearse: surge", "rehearse: wave 1/2 (old-0 old-1)", "rehearse: wave 2/2 (old-2)", "rehearse: left Pending"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("cases %q, want %q", names, want)
	}
	cases := doc.Suites[0].Cases
	if cases[1].Time != "3.200" || !strings.Contains(cases[1].SystemOut, "default/web-b refused by PDB web for 1.4s, then evicted") {
		t.Errorf("wave 1: time %s, out %q", cases[1].Time, cases[1].SystemOut)
	}
	if !strings.Contains(cases[3].SystemOut, "default/legacy-x: 0/5 nodes are available") {
		t.Errorf("left Pending: %q", cases[3].SystemOut)
	}
}
