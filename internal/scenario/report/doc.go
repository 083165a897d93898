// Package report writes what came of scenario runs, each from the same
// step results: the terminal's summary as a run goes (Terminal), and after
// it JUnit XML (WriteJUnit) and a self-contained HTML page (WriteHTML).
package report
