// Package clusterdir is the on-disk layout of kubesim's clusters:
// $KUBESIM_HOME/clusters/<name>/{cluster.yaml,pki/,etcd/,logs/,kubeconfig}
// and the files components and the supervisor keep there. It says where
// things are; what is in them is written by the packages that own them.
package clusterdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"syscall"

	"sigs.k8s.io/yaml"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/pki"
)

// Home returns kubesim's home: $KUBESIM_HOME, or ~/.kubesim.
func Home() (string, error) {
	if h := os.Getenv("KUBESIM_HOME"); h != "" {
		return filepath.Abs(h)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding the home directory (set KUBESIM_HOME): %w", err)
	}
	return filepath.Join(home, ".kubesim"), nil
}

// CheckHome says what is wrong with an existing home that kubesim would
// keep clusters' keys in: another user owning it, or others able to write
// to it ("" if nothing, or if it does not exist yet: kubesim makes it 0700).
func CheckHome(home string) string {
	info, err := os.Stat(home)
	if err != nil {
		return ""
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Sprintf("%s belongs to another user (uid %d), who can read every cluster's keys there; use a KUBESIM_HOME of your own", home, st.Uid)
	}
	if info.Mode().Perm()&0o022 != 0 {
		return fmt.Sprintf("%s is writable by others (mode %04o) and holds clusters' keys; chmod 700 it", home, info.Mode().Perm())
	}
	return ""
}

// Dir is one cluster's directory.
type Dir struct {
	Name string
	Path string
}

// ErrNotExist is wrapped by the error for a cluster that has no directory.
var ErrNotExist = errors.New("does not exist")

// ClustersPath is where all clusters live under home.
func ClustersPath(home string) string { return filepath.Join(home, "clusters") }

// For returns the directory of the cluster called name (it may not exist).
func For(home, name string) Dir {
	return Dir{Name: name, Path: filepath.Join(ClustersPath(home), name)}
}

// NotExist is the error for a cluster called name that does not exist.
func NotExist(name string) error {
	return fmt.Errorf("cluster %q %w (kubesim get clusters lists them)", name, ErrNotExist)
}

// Open returns the directory of an existing cluster.
func Open(home, name string) (Dir, error) {
	d := For(home, name)
	if _, err := os.Stat(d.ConfigFile()); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return d, NotExist(name)
		}
		return d, err
	}
	return d, nil
}

// List returns the names of all clusters, sorted.
func List(home string) ([]string, error) {
	return listDirs(home, func(dir string) bool {
		_, err := os.Stat(filepath.Join(dir, "cluster.yaml"))
		return err == nil
	})
}

// ListDirs is List with the directories a crash left without their
// cluster.yaml (mid-create or mid-delete), so they can be removed too.
func ListDirs(home string) ([]string, error) {
	return listDirs(home, func(string) bool { return true })
}

func listDirs(home string, keep func(dir string) bool) ([]string, error) {
	entries, err := os.ReadDir(ClustersPath(home))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() && keep(filepath.Join(ClustersPath(home), e.Name())) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

func (d Dir) ConfigFile() string     { return filepath.Join(d.Path, "cluster.yaml") }
func (d Dir) Kubeconfig() string     { return filepath.Join(d.Path, "kubeconfig") }
func (d Dir) PKI() string            { return filepath.Join(d.Path, "pki") }
func (d Dir) Etcd() string           { return filepath.Join(d.Path, "etcd") }
func (d Dir) Logs() string           { return filepath.Join(d.Path, "logs") }
func (d Dir) Log(name string) string { return filepath.Join(d.Logs(), name+".log") }
func (d Dir) AuditPolicy() string    { return filepath.Join(d.Path, "audit-policy.yaml") }

// KubeletSocket is where usage-metrics serves the simulated nodes' kubelet
// port, which the API server reaches through the egress proxy.
func (d Dir) KubeletSocket() string { return filepath.Join(d.Path, "kubelet.sock") }

// ComponentKubeconfig is the kubeconfig a control-plane component uses.
func (d Dir) ComponentKubeconfig(component string) string {
	return filepath.Join(d.PKI(), component+".kubeconfig")
}

// OfComponentKubeconfig is the directory of the cluster whose component
// kubeconfig is at path (ComponentKubeconfig's inverse): how a component
// given only its kubeconfig finds the cluster's files.
func OfComponentKubeconfig(path string) Dir {
	dir := filepath.Dir(filepath.Dir(path))
	return Dir{Name: filepath.Base(dir), Path: dir}
}

// NodeLedger is the node autoscaler's record of its nodes' lives (when
// each node of a NodePool came and went, at what price): one JSON line
// each, appended by the autoscaler's process (see nodecost.Record).
func (d Dir) NodeLedger() string { return filepath.Join(d.Path, "nodes.jsonl") }

// LockFile is held by the cluster's supervisor for as long as it runs.
func (d Dir) LockFile() string { return filepath.Join(d.Path, "supervisor.lock") }

// OperationLockFile is held by a kubesim command while it starts, stops,
// deletes, restores or scales the cluster.
func (d Dir) OperationLockFile() string { return filepath.Join(d.Path, "operation.lock") }

// UserKubeconfigFile holds the path of the user's kubeconfig that create
// or the last start merged the cluster's context into.
func (d Dir) UserKubeconfigFile() string { return filepath.Join(d.Path, "user-kubeconfig") }

// StartedFile exists while every component of the cluster has been
// started; the supervisor writes it once they are, and removes it on stop.
func (d Dir) StartedFile() string { return filepath.Join(d.Path, "started") }

// StartupFile is the supervisor's record of the cluster's last start: one
// JSON event a line (see supervisor.Startup).
func (d Dir) StartupFile() string { return filepath.Join(d.Path, "startup.jsonl") }

// HealthFile is the supervisor's record of what is wrong with the running
// cluster, if anything: JSON, state, cause and since (see
// supervisor.Health).
func (d Dir) HealthFile() string { return filepath.Join(d.Path, "health.json") }

// DeschedulerPolicy is the resolved policy the descheduler component runs.
func (d Dir) DeschedulerPolicy() string { return filepath.Join(d.Path, "descheduler-policy.yaml") }

// InstanceTypes is the user's instance types Karpenter's KWOK provider
// reads (Cluster.Status.InstanceTypes).
func (d Dir) InstanceTypes() string { return filepath.Join(d.Path, "instance-types.json") }

// PIDFile holds the supervisor's process id.
func (d Dir) PIDFile() string { return filepath.Join(d.Path, "supervisor.pid") }

// OwnerFile names the process (PID and start time) whose exit stops the
// cluster, if it has one.
func (d Dir) OwnerFile() string { return filepath.Join(d.Path, "owner") }

// Load reads cluster.yaml.
func (d Dir) Load() (*v1alpha1.Cluster, error) {
	data, err := os.ReadFile(d.ConfigFile())
	if err != nil {
		return nil, err
	}
	c := &v1alpha1.Cluster{}
	if err := yaml.Unmarshal(data, c); err != nil {
		return nil, fmt.Errorf("%s is corrupt: %w", d.ConfigFile(), err)
	}
	if c.Status == nil {
		return nil, fmt.Errorf("%s is corrupt: no status", d.ConfigFile())
	}
	c.SetDefaults() // options added since the cluster was made
	return c, nil
}

// Save writes cluster.yaml atomically, so a crash never leaves half a file.
func (d Dir) Save(c *v1alpha1.Cluster) error {
	data, err := yaml.Marshal(c)
	if err != nil {
		return err
	}
	return pki.WriteFileAtomic(d.ConfigFile(), data)
}
