package export

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubesim/kubesim/internal/snapshot"
)

// SourceConfig reaches the cluster of a kubeconfig context: kubeconfig, or
// else $KUBECONFIG or ~/.kube/config. An unknown context's error lists the
// file's contexts.
func SourceConfig(kubeconfig, context string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	raw, err := rules.Load()
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig: %s", oneLine(err))
	}
	if _, ok := raw.Contexts[context]; !ok {
		var names []string
		for name := range raw.Contexts {
			names = append(names, name)
		}
		slices.Sort(names)
		return nil, fmt.Errorf("--context %q: no such context in the kubeconfig (it has: %s)", context, strings.Join(names, ", "))
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*raw, &clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("--context %q: %s", context, oneLine(err))
	}
	return cfg, nil
}

// WriteFile writes the result to path, whole or not at all.
func (r *Result) WriteFile(path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".snapshot-*")
	if err != nil {
		return fmt.Errorf("--path: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := snapshot.Write(tmp, r.Header, r.Objects, r.Notes()...); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Summary is what an export says when it is done, in lines.
func (r *Result) Summary() []string {
	lines := []string{fmt.Sprintf("Read %s (Kubernetes %s): %s", r.Header.Source, r.Header.Kubernetes, snapshot.Summary(r.Header.Counts))}
	var forbidden []string
	for kind, why := range r.Header.Skipped {
		if why == "forbidden" {
			forbidden = append(forbidden, kind)
		}
	}
	if len(forbidden) > 0 {
		slices.Sort(forbidden)
		lines = append(lines, fmt.Sprintf("Skipped, not allowed to list them: %s (deploy/snapshot-reader-clusterrole.yaml grants what an export reads)", strings.Join(forbidden, ", ")))
	}
	if len(r.Carried) > 0 {
		lines = append(lines, fmt.Sprintf("%d workloads' templates took their live pods' resources and containers: %s", len(r.Carried), strings.Join(r.Carried, ", ")))
	}
	for _, why := range slices.Sorted(maps.Keys(r.Left)) {
		lines = append(lines, fmt.Sprintf("Left out: %d %s", r.Left[why], why))
	}
	return lines
}
