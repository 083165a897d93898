package version

// Clock names the runtime patch that gives this binary its scaled clock
// (patches/go, as go/VERSION/FILE), empty for a binary built without make's
// overlay: such a binary's clock is real time whatever it is told, so it
// refuses a cluster whose time is scaled.
// The Makefile stamps it (-X …/internal/version.Clock=…).
var Clock = ""

// ScaledClock reports whether this binary can run a cluster faster than
// real time.
func ScaledClock() bool { return Clock != "" }

// ClockLine says whether the binary can scale its clock, in one line.
func ClockLine() string {
	if Clock == "" {
		return "clock: real time only (built without make: --time-scale needs the scaled clock of patches/go)"
	}
	return "clock: scalable (--time-scale), " + Clock
}
