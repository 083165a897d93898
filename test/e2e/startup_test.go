//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// A component process leaves kubectl's translations unloaded: package
// kubectltext's init runs before kubectl's first translation, which then
// loads nothing. Go's order of package initialisation decides it, so it is
// checked on the binary as built (GODEBUG=inittrace=1 prints each init, in
// order, with its allocations).
func TestComponentSkipsKubectlTranslations(t *testing.T) {
	cmd := exec.Command(binary, "component", "kube-scheduler", "--help")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubesim component kube-scheduler --help: %v\n%s", err, out)
	}
	skipAt, firstCmd, optionsBytes := -1, -1, -1
	for i, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 || f[0] != "init" {
			continue
		}
		switch pkg := f[1]; {
		case pkg == "github.com/kubesim/kubesim/internal/kubectltext":
			skipAt = i
		case strings.HasPrefix(pkg, "k8s.io/kubectl/pkg/cmd/"):
			if firstCmd < 0 {
				firstCmd = i
			}
			if pkg == "k8s.io/kubectl/pkg/cmd/options" {
				optionsBytes, _ = strconv.Atoi(f[7]) // "init P @t ms, d ms clock, B bytes, N allocs"
			}
		}
	}
	if skipAt < 0 || firstCmd < 0 || optionsBytes < 0 {
		t.Fatalf("GODEBUG=inittrace=1 shows no init of kubectltext (line %d), of kubectl's command packages (line %d) or of their options (%d bytes)", skipAt, firstCmd, optionsBytes)
	}
	if skipAt > firstCmd {
		t.Errorf("kubectltext is initialised after a kubectl command package: its translations load first")
	}
	// Loading the catalogue allocated 4.6 MB in this init, the first to translate.
	if optionsBytes > 1<<20 {
		t.Errorf("k8s.io/kubectl/pkg/cmd/options' init allocated %d bytes: the catalogue was loaded", optionsBytes)
	}
}
