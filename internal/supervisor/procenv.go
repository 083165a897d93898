package supervisor

import (
	"os"
	"strconv"

	"gopkg.in/natefinch/lumberjack.v2"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterclock"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/component"
	"github.com/kubesim/kubesim/upstream/membudget"
	"github.com/kubesim/kubesim/upstream/startprofile"
)

// What the supervisor and the components run with.

// processEnv is the environment of the supervisor and the components: what
// a Go program needs, never the rest of the caller's (a Stage template, or
// a component's crash dump, cannot show a secret that is not there).
func processEnv(gogc string) []string {
	env := []string{"GOGC=" + gogc}
	for _, name := range []string{"PATH", "HOME", "TMPDIR", "TZ", "LANG", "LC_ALL", "GODEBUG", "GOMAXPROCS", "GOMEMLIMIT", startprofile.EnvVar, startprofile.WindowEnvVar, startprofile.AfterEnvVar} {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// componentEnv is a component's environment: kubesim's own (processEnv),
// its GOGC, its memory share, and the cluster's clock (the supervisor
// itself keeps real time: its waits are for real work).
func componentEnv(comp component.Component, all []component.Component, c *v1alpha1.Cluster) []string {
	gogc := gcPercent
	if comp.GCPercent != "" {
		gogc = comp.GCPercent
	}
	env := processEnv(gogc)
	if share := memoryShare(comp, all, c); share > 0 {
		env = append(env, membudget.EnvVar+"="+strconv.FormatInt(share, 10))
	}
	if c.Status != nil {
		env = append(env, clusterclock.Env(c.Status.Clock)...)
	}
	return env
}

// gcPercent is the GOGC of the supervisor and every component but etcd
// (etcdGCPercent): a simulator's control plane churns through short-lived
// objects, and collecting garbage four times less often spends memory the
// machine has (a few hundred MB per component at 10,000 pods) to save CPU
// it has not.
const gcPercent = "400"

// logWriter is the log of a component (or of the supervisor), rotated as
// the API server rotates its audit log: at 100 MB, three old ones kept.
func logWriter(d clusterdir.Dir, name string) *lumberjack.Logger {
	return &lumberjack.Logger{Filename: d.Log(name), MaxSize: 100, MaxBackups: 3}
}
