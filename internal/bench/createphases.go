package bench

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/kubesim/kubesim/internal/controlplane"
	"github.com/kubesim/kubesim/internal/supervisor"
)

// CreatePhases are the parts of create → ready, in order, each ending at
// a line of the supervisor's log (or, for the last, at create's return).
var CreatePhases = []struct{ Name, EndsAt string }{
	{"prepare", "started " + controlplane.Etcd + " "}, // files, certificates, launching the supervisor
	{controlplane.Etcd, controlplane.Etcd + " " + supervisor.ReadyMark},
	{controlplane.KubeAPIServer, controlplane.KubeAPIServer + " " + supervisor.ReadyMark}, // serving
	// CRDs, RBAC, namespaces, written while the API server's own start-up
	// hooks finish, until it is ready.
	{"bootstrap", controlplane.KubeAPIServer + " " + supervisor.SetUpMark},
	{"components", supervisor.StartedMark}, // the rest started and ready
	{"return", ""},                         // create notices and writes the kubeconfig
}

// createPhases splits a create that began at began and returned at ended
// by the supervisor's log; a phase whose line is missing takes 0.
func createPhases(log io.Reader, began, ended time.Time) ([]time.Duration, error) {
	marks := map[string]time.Time{}
	sc := bufio.NewScanner(log)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "supervisor: ")
		if !ok || len(rest) < len("2006/01/02 15:04:05.000000 ") {
			continue
		}
		at, err := time.ParseInLocation("2006/01/02 15:04:05.000000", rest[:26], time.Local)
		if err != nil {
			continue
		}
		for _, p := range CreatePhases {
			if _, seen := marks[p.EndsAt]; !seen && p.EndsAt != "" && strings.HasPrefix(rest[27:]+" ", p.EndsAt) {
				marks[p.EndsAt] = at
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	out := make([]time.Duration, len(CreatePhases))
	last := began
	for i, p := range CreatePhases {
		end, ok := marks[p.EndsAt]
		if p.EndsAt == "" {
			end, ok = ended, true
		}
		if !ok {
			return nil, fmt.Errorf("the supervisor's log has no %q", p.EndsAt)
		}
		out[i], last = end.Sub(last), end
	}
	return out, nil
}

func createPhasesOf(logPath string, began, ended time.Time) ([]time.Duration, error) {
	f, err := os.Open(logPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return createPhases(f, began, ended)
}
