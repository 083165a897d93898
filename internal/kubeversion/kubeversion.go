// Package kubeversion is the Kubernetes versions a kubesim build offers:
// its own, whose upstream components are compiled into the kubesim binary,
// and each under versions/, whose components are a binary of their own
// beside it (versions/README.md). A cluster runs one of them
// (Cluster.Kubernetes); this package says which release that is and which
// binary runs its components.
package kubeversion

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/component-base/version"

	"github.com/kubesim/kubesim/internal/execcopy"
)

// Version is one Kubernetes version kubesim offers.
type Version struct {
	// Minor is how users name it: "1.35".
	Minor string
	// Release is the upstream release its components are built from:
	// "v1.35.4".
	Release string
}

// others are the versions under versions/, each the release its go.mod
// pins (a test holds them to it). kubesim's own is not among them.
var others = []Version{
	{Minor: "1.34", Release: "v1.34.4"},
	{Minor: "1.35", Release: "v1.35.4"},
	{Minor: "1.37", Release: "v1.37.2"},
}

// Default is the version kubesim is built on, whose components are in its
// own binary.
func Default() Version {
	release := ownRelease()
	return Version{Minor: MinorOf(release), Release: release}
}

// ownRelease is the release stamped into this binary (package version
// stamps a build without make's stamps from its build record).
var ownRelease = func() string { return version.Get().GitVersion }

// MinorOf is the minor version of a release: v1.36.3 → 1.36.
func MinorOf(release string) string {
	parts := strings.SplitN(strings.TrimPrefix(release, "v"), ".", 3)
	if len(parts) < 2 {
		return release
	}
	return parts[0] + "." + parts[1]
}

// IsDefault reports whether v is the version kubesim is built on.
func (v Version) IsDefault() bool { return v.Minor == Default().Minor }

// String is v's release.
func (v Version) String() string { return v.Release }

// Offered are the versions this kubesim can be built with, oldest first.
func Offered() []Version {
	all := append([]Version{Default()}, others...)
	slices.SortFunc(all, func(a, b Version) int { return compareMinors(a.Minor, b.Minor) })
	return slices.CompactFunc(all, func(a, b Version) bool { return a.Minor == b.Minor })
}

// Built are the offered versions this build can run: its own, and those
// whose binary is beside it.
func Built() []Version {
	return slices.DeleteFunc(Offered(), func(v Version) bool { return v.Binary() != nil })
}

// Binary says whether v's components can be run, and if not, why.
func (v Version) Binary() error {
	if v.IsDefault() {
		return nil
	}
	path, err := v.path()
	if err != nil {
		return err
	}
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("%s is not built here (no %s beside kubesim): build it with `make build VERSIONS=%s`", v.Minor, filepath.Base(path), v.Minor)
	}
	return nil
}

// BinaryName is the file name of a version's components' binary.
func BinaryName(minor string) string { return "kubesim-k8s-" + minor }

func (v Version) path() (string, error) {
	exe, err := execcopy.Executable() // beside the original, not its copy
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(exe), BinaryName(v.Minor)), nil
}

// Command is the program and arguments that run the upstream component
// name of version v: kubesim's own `kubesim component NAME` for its
// version, the version's binary (`kubesim-k8s-1.35 NAME`) for another.
func (v Version) Command(kubesim, name string, args []string) (string, []string, error) {
	if v.IsDefault() {
		return kubesim, append([]string{"component", name}, args...), nil
	}
	if err := v.Binary(); err != nil {
		return "", nil, fmt.Errorf("kubernetes: %w", err)
	}
	path, err := v.path()
	return path, append([]string{name}, args...), err
}

// FieldPrefix begins each of Lookup's errors: the field and flag at fault.
const FieldPrefix = "kubernetes (--kubernetes): "

var minorPattern = regexp.MustCompile(`^v?(\d+)\.(\d+)(\.\d+)?$`)

// Lookup is the version a user names ("1.35", "v1.35" or its release
// "v1.35.4"); empty names the default. It must be offered and built.
func Lookup(name string) (Version, error) {
	if name == "" {
		return Default(), nil
	}
	m := minorPattern.FindStringSubmatch(strings.TrimSpace(name))
	if m == nil {
		return Version{}, fmt.Errorf(FieldPrefix+"%q is not a Kubernetes version: give a minor version such as %s (one of: %s)", name, Default().Minor, minors(Built()))
	}
	major, _ := strconv.Atoi(m[1])
	minorNumber, _ := strconv.Atoi(m[2])
	minor := fmt.Sprintf("%d.%d", major, minorNumber)
	i := slices.IndexFunc(Offered(), func(v Version) bool { return v.Minor == minor })
	if i < 0 {
		return Version{}, fmt.Errorf(FieldPrefix+"kubesim does not offer Kubernetes %s: give one of %s", minor, minors(Built()))
	}
	v := Offered()[i]
	if m[3] != "" && "v"+strings.TrimPrefix(name, "v") != v.Release {
		return Version{}, fmt.Errorf(FieldPrefix+"kubesim offers Kubernetes %s as %s only: give %s", minor, v.Release, minor)
	}
	if err := v.Binary(); err != nil {
		return Version{}, fmt.Errorf(FieldPrefix+"%w, or give one of %s", err, minors(Built()))
	}
	return v, nil
}

func minors(vs []Version) string {
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.Minor
	}
	return strings.Join(names, ", ")
}

// compareMinors orders "1.9" before "1.10".
func compareMinors(a, b string) int {
	var am, an, bm, bn int
	fmt.Sscanf(a, "%d.%d", &am, &an)
	fmt.Sscanf(b, "%d.%d", &bm, &bn)
	return cmp.Or(cmp.Compare(am, bm), cmp.Compare(an, bn))
}

// CheckUpgrade refuses what upstream's version skew policy does not
// allow a control plane: a downgrade, or a skip of a minor (the API
// server goes up one minor at a time, and the controller-manager and
// scheduler may not be newer than it).
func CheckUpgrade(from, to Version) error {
	switch c := compareMinors(to.Minor, from.Minor); {
	case c == 0:
		return fmt.Errorf("%sthe cluster runs Kubernetes %s already", FieldPrefix, from.Release)
	case c < 0:
		return fmt.Errorf("%s%s is older than the cluster's %s: Kubernetes does not downgrade a control plane (version skew policy); make a new cluster of %s instead", FieldPrefix, to.Minor, from.Minor, to.Minor)
	case compareMinors(to.Minor, next(from.Minor)) > 0:
		return fmt.Errorf("%s%s skips %s: a control plane is upgraded one minor at a time (version skew policy); upgrade to %s first", FieldPrefix, to.Minor, next(from.Minor), next(from.Minor))
	}
	return nil
}

// next is the minor after minor: 1.35 → 1.36.
func next(minor string) string {
	var major, n int
	fmt.Sscanf(minor, "%d.%d", &major, &n)
	return fmt.Sprintf("%d.%d", major, n+1)
}
