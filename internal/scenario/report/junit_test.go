package report

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
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
