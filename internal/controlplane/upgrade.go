package controlplane

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/credentials"
)

// FormatVersion is the layout of a cluster's files this kubesim makes
// (Status.FormatVersion). A cluster made by an older kubesim is brought up
// to it at start, once, by the upgrades below, so nothing else needs to
// know what older kubesims left out. Bump it with a new upgrade whenever
// create starts writing something a start needs.
const FormatVersion = 4

// upgrades[v] brings a cluster of format v to v+1. What a component
// declares (ports, certificates) needs none: GiveDeclared gives it.
var upgrades = []func(d clusterdir.Dir, c *v1alpha1.Cluster) error{
	upgradeFromUnversioned,
	nothingMore,
	nothingMore,
	nothingMore,
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

// upgradeFromUnversioned keeps, in the status of a cluster made before
// formats were kept, the policies its create wrote as files. (Its
// missing certificates and ports are given by GiveDeclared, as every
// start gives them.)
func upgradeFromUnversioned(d clusterdir.Dir, c *v1alpha1.Cluster) error {
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

// nothingMore is the upgrade of a format whose additions GiveDeclared
// makes: format 2 (the API server's webhook client certificate), format
// 3 (usage-metrics' port, identity and certificate), format 4 (ports as
// a list, which the status reads in either form).
func nothingMore(clusterdir.Dir, *v1alpha1.Cluster) error { return nil }

// GiveDeclared gives a cluster what the component table declares and it
// lacks — a port, a certificate, an identity's kubeconfig — as a cluster
// made by an older kubesim may; it reports whether it changed c. It runs
// at every start: a new component needs nothing more to reach old
// clusters.
func GiveDeclared(d clusterdir.Dir, c *v1alpha1.Cluster) (changed bool, err error) {
	before := slices.Clone(c.Status.Ports)
	if err := AssignPorts(c); err != nil {
		return false, err
	}
	if err := credentials.IssueMissing(d, Components()); err != nil {
		return false, err
	}
	if err := credentials.WriteMissingKubeconfigs(d, c, Identities()); err != nil {
		return false, err
	}
	return !slices.Equal(before, c.Status.Ports), nil
}
