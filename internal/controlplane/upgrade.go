package controlplane

import (
	"errors"
	"fmt"
	"os"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/credentials"
)

// FormatVersion is the layout of a cluster's files this kubesim makes
// (Status.FormatVersion). A cluster made by an older kubesim is brought up
// to it at start, once, by the upgrades below, so nothing else needs to
// know what older kubesims left out. Bump it with a new upgrade whenever
// create starts writing something a start needs.
const FormatVersion = 3

// upgrades[v] brings a cluster of format v to v+1.
var upgrades = []func(d clusterdir.Dir, c *v1alpha1.Cluster) error{
	upgradeFromUnversioned,
	issueWebhookClient,
	addUsageMetrics,
}

// Upgrade brings a cluster made by an older kubesim to FormatVersion,
// changing c and the cluster's files; it reports whether it changed
// anything, so that the caller saves c. A cluster of a newer format is
// refused: this kubesim would not know what its files mean.
func Upgrade(d clusterdir.Dir, c *v1alpha1.Cluster) (changed bool, err error) {
	if c.Status.FormatVersion > FormatVersion {
		return false, fmt.Errorf("cluster %q was made by a newer kubesim (format %d; this one knows up to %d): use that kubesim, or make the cluster anew",
			c.Name, c.Status.FormatVersion, FormatVersion)
	}
	for ; c.Status.FormatVersion < FormatVersion; c.Status.FormatVersion++ {
		if err := upgrades[c.Status.FormatVersion](d, c); err != nil {
			return changed, fmt.Errorf("bringing cluster %q up to date (format %d): %w", c.Name, c.Status.FormatVersion+1, err)
		}
		changed = true
	}
	return changed, nil
}

// upgradeFromUnversioned gives a cluster made before formats were kept
// what every kubesim since has made at create: etcd's own CA, the dpdb
// controller's identity and webhook certificate, the explain endpoint's
// certificate, the ports of both, and its policies kept in its status.
func upgradeFromUnversioned(d clusterdir.Dir, c *v1alpha1.Cluster) error {
	p := &c.Status.Ports
	if p.DPDBWebhook == 0 || p.SchedulerExplain == 0 {
		free, err := FreePorts(2, UsedPorts(c))
		if err != nil {
			return err
		}
		if p.DPDBWebhook == 0 {
			p.DPDBWebhook = free[0]
		}
		if p.SchedulerExplain == 0 {
			p.SchedulerExplain = free[1]
		}
	}
	if err := credentials.IssueMissing(d, Components()); err != nil {
		return err
	}
	if err := credentials.WriteKubeconfigs(d, c, Identities()); err != nil {
		return err
	}
	// The policies' files, as that cluster's create wrote them.
	return errors.Join(
		keepFile(&c.Status.AuditPolicy, d.AuditPolicy()),
		keepFile(&c.Status.DeschedulerPolicy, d.DeschedulerPolicy()))
}

// keepFile reads into *field the file at path, if the field is empty and
// the file exists.
func keepFile(field *string, path string) error {
	if *field != "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	*field = string(data)
	return err
}

// issueWebhookClient gives a cluster of format 1 the API server's client
// certificate for webhooks, which the dpdb webhook now requires.
func issueWebhookClient(d clusterdir.Dir, _ *v1alpha1.Cluster) error {
	return credentials.IssueMissing(d, Components())
}

// addUsageMetrics gives a cluster made before usage-metrics its port, its
// identity and its serving certificate.
func addUsageMetrics(d clusterdir.Dir, c *v1alpha1.Cluster) error {
	if c.Status.Ports.UsageMetrics == 0 {
		free, err := FreePorts(1, UsedPorts(c))
		if err != nil {
			return err
		}
		c.Status.Ports.UsageMetrics = free[0]
	}
	if err := credentials.IssueMissing(d, Components()); err != nil {
		return err
	}
	return credentials.WriteKubeconfigs(d, c, Identities())
}
