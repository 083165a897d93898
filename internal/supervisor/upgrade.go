package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/kubesim/kubesim/internal/clusterclock"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/component"
	"github.com/kubesim/kubesim/internal/controlplane"
	"github.com/kubesim/kubesim/internal/kubeversion"
)

// An upgrade of a running cluster's Kubernetes version (`kubesim upgrade
// cluster`): the command writes the version it wants to the request file
// and signals the supervisor (SIGUSR1), which alone writes the cluster's
// config while it runs. The supervisor moves the upstream components to
// that version in upstream's order — the API server, then the
// controller-manager, then the scheduler, each once the one before is
// ready again — keeping etcd and every other component running, and
// writes the outcome to the result file.

// upgradeSignal asks the supervisor to upgrade.
const upgradeSignal = syscall.SIGUSR1

func upgradeRequestFile(d clusterdir.Dir) string { return filepath.Join(d.Path, "upgrade.request") }
func upgradeResultFile(d clusterdir.Dir) string  { return filepath.Join(d.Path, "upgrade.result") }

// upgradeDone begins the result of an upgrade that finished.
const upgradeDone = "upgraded to "

// Upgrade asks the running cluster's supervisor to move its control plane
// to version v and waits, at most wait, until it has.
func Upgrade(ctx context.Context, d clusterdir.Dir, v kubeversion.Version, wait time.Duration) error {
	rec, err := readPIDFile(d)
	if err == nil && !rec.isSupervisorOf(d) {
		err = fmt.Errorf("process %d is not its supervisor", rec.pid)
	}
	if err != nil {
		return fmt.Errorf("cluster %q: cannot reach its supervisor: %w", d.Name, err)
	}
	if err := os.Remove(upgradeResultFile(d)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.WriteFile(upgradeRequestFile(d), []byte(v.Minor), 0o600); err != nil {
		return err
	}
	if err := syscall.Kill(rec.pid, upgradeSignal); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, clusterclock.Stretch(wait))
	defer cancel()
	for {
		if data, err := os.ReadFile(upgradeResultFile(d)); err == nil {
			if result := string(data); !strings.HasPrefix(result, upgradeDone) {
				return fmt.Errorf("cluster %q: the upgrade to %s failed: %s (kubesim logs supervisor --name %s)", d.Name, v.Release, result, d.Name)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster %q: not upgraded to %s within %s: see kubesim logs supervisor --name %s", d.Name, v.Release, wait, d.Name)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// serveUpgrades upgrades the cluster at each request, once it has
// started, and records each outcome.
func (s *supervisor) serveUpgrades(ctx context.Context, comps []component.Component, requests <-chan os.Signal) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-requests:
			result := upgradeDone
			release, err := s.upgrade(ctx, comps)
			if err != nil {
				result = err.Error()
				s.logger.Printf("upgrade failed: %v", err)
			} else {
				result += release
			}
			if err := os.WriteFile(upgradeResultFile(s.dir), []byte(result), 0o600); err != nil {
				s.logger.Printf("cannot record the upgrade's result: %v", err)
			}
		}
	}
}

// upgrade moves the upstream components to the version requested, saving
// it in the cluster's config first, so that each component's next start
// runs it.
func (s *supervisor) upgrade(ctx context.Context, comps []component.Component) (string, error) {
	data, err := os.ReadFile(upgradeRequestFile(s.dir))
	if err != nil {
		return "", err
	}
	v, err := kubeversion.Lookup(strings.TrimSpace(string(data)))
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	from := s.cfg.Status.KubernetesVersion
	s.cfg.Kubernetes, s.cfg.Status.KubernetesVersion = v.Minor, v.Release
	err = s.dir.Save(s.cfg)
	s.mu.Unlock()
	if err != nil {
		return "", err
	}
	s.logger.Printf("upgrading the control plane from Kubernetes %s to %s", from, v.Release)
	for _, name := range controlplane.UpstreamComponents {
		i := slices.IndexFunc(comps, func(c component.Component) bool { return c.Name == name })
		if i < 0 {
			continue
		}
		started := make(chan struct{})
		select {
		case s.restart[name] <- restartRequest{reason: "upgrading to Kubernetes " + v.Release, started: started}:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		select {
		case <-started:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		if comps[i].Ready != nil {
			s.waitReady(ctx, comps[i])
		}
		if name == controlplane.KubeAPIServer {
			// Its own bootstrap hooks too, in a version not kubesim's.
			for controlplane.APIServerReady(ctx, s.dir, s.config()) != nil && ctx.Err() == nil {
				time.Sleep(readyPoll)
			}
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		s.logger.Printf("%s runs Kubernetes %s", name, v.Release)
	}
	s.logger.Printf("upgraded the control plane to Kubernetes %s", v.Release)
	return v.Release, nil
}
