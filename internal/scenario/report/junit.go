package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/kubesim/kubesim/internal/scenario/result"
)

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes JUnit XML: a suite per scenario, a test case per
// assertion (and per wait, and per step that failed otherwise).
func WriteJUnit(w io.Writer, results []*result.Scenario) error {
	var doc junitSuites
	for _, r := range results {
		s := junitSuite{Name: r.Name, Time: seconds(r.Duration.Seconds())}
		add := func(c junitCase) {
			c.ClassName = r.Name
			s.Tests++
			if c.Failure != nil {
				s.Failures++
			}
			s.Cases = append(s.Cases, c)
		}
		if r.Setup != "" {
			add(junitCase{Name: "clusters", Failure: &junitFailure{Message: r.Setup}})
		}
		for _, st := range r.Steps {
			for _, a := range st.Assertions {
				c := junitCase{Name: st.Name + ": " + a.Name, Time: seconds(st.Duration.Seconds())}
				if !a.Passed {
					text := fmt.Sprintf("expected: %s\nactual:   %s\n", a.Expected, a.Actual)
					if st.Placement != nil {
						text += "placement:\n" + st.Placement.Table()
					}
					c.Failure = &junitFailure{Message: a.Name, Text: text}
				}
				add(c)
			}
			if d := st.Drain; d != nil {
				// A case per wave, timed by its wall time; what was left
				// Pending, a case of its own. Assertions judge them.
				if sg := d.Surge; sg != nil {
					add(junitCase{Name: st.Name + ": surge", Time: seconds(sg.Duration.Seconds()), SystemOut: (&result.Drain{Surge: sg}).Text()})
				}
				for i, w := range d.Waves {
					add(junitCase{Name: fmt.Sprintf("%s: wave %d/%d (%s)", st.Name, i+1, d.Planned, strings.Join(w.Nodes, " ")),
						Time: seconds(w.Duration.Seconds()), SystemOut: w.Text(i+1, d.Planned)})
				}
				if len(d.Pending) > 0 {
					add(junitCase{Name: st.Name + ": left Pending", SystemOut: (&result.Drain{Pending: d.Pending}).Text()})
				}
			}
			if st.Error != "" || st.Check {
				c := junitCase{Name: st.Name, Time: seconds(st.Duration.Seconds())}
				if st.Error != "" {
					text := st.Error + "\n"
					if st.Placement != nil {
						text += "placement:\n" + st.Placement.Table()
					}
					c.Failure = &junitFailure{Message: st.Error, Text: text}
				}
				add(c)
			}
		}
		doc.Suites = append(doc.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func seconds(s float64) string { return fmt.Sprintf("%.3f", s) }
