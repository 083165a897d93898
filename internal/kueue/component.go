// Package kueue is the cluster's Kueue, when asked for (`create cluster
// --addons kueue`): Kueue's own manager — its controllers, scheduler and
// webhooks — in a process the supervisor runs, with Kueue's CRDs, its
// webhooks registered by URL on loopback, and the batch/v1 Job
// integration. Kueue decides which Job is admitted, queued or preempted;
// the simulated kubelets run the pods of the Jobs it lets start.
package kueue

import (
	"embed"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/aggregatedapi"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/component"
	"github.com/kubesim/kubesim/internal/pki"
)

// ComponentName is Kueue's name among the cluster's components.
const ComponentName = "kueue"

// Its ports, on loopback: the webhooks (admission and CRD conversion),
// Prometheus metrics and the health probes.
const (
	webhookPort    = "webhook"
	metricsPort    = "metrics"
	healthPort     = "health"
	visibilityPort = "visibility"
)

var (
	identity    = component.Identity{File: ComponentName, User: "kubesim:kueue"}
	webhookCert = component.ServingCert{Name: "kueue-webhook", CommonName: "kubesim-kueue-webhook"}
	// The aggregator verifies the visibility API by its Service's name.
	visibilityCert = component.ServingCert{Name: "kueue-visibility", CommonName: "kubesim-kueue-visibility",
		DNSNames: []string{visibilityService + "." + Namespace + ".svc"}}

	//go:embed clusterrole.yaml
	clusterRole []byte
	// Kueue v0.19.1's CRDs and webhooks, as its module ships them
	// (config/components; upstream/LICENSE).
	//go:embed upstream/crds/*.yaml
	crdFiles embed.FS
	//go:embed upstream/webhooks.yaml
	webhookManifests []byte
)

// Component is Kueue's entry in the control plane's table. A cluster
// without the add-on has neither its process nor its CRDs.
func Component() component.Component {
	return component.Component{
		Name:    ComponentName,
		Main:    run,
		Args:    args,
		Prepare: prepare,
		Flags: []component.Flag{
			{Name: "addons", Usage: "add-ons to run beside the control plane: kueue (Kueue's manager: queues, quotas and admission of Jobs)",
				Lands: component.At((*pflag.FlagSet).StringSliceVar, func(s *v1alpha1.ClusterSpec) *[]string { return &s.Addons })},
			{Name: "kueue-config", Usage: "Kueue Configuration file (config.kueue.x-k8s.io/v1beta2) for the kueue add-on, which it implies",
				Lands: component.At((*pflag.FlagSet).StringVar, func(s *v1alpha1.ClusterSpec) *string { return &s.KueueConfig })},
		},
		Enabled:      func(c *v1alpha1.Cluster) bool { return c.HasAddon(v1alpha1.AddonKueue) },
		OnlyIfRun:    true,
		Ready:        ready,
		Setup:        register,
		Ports:        []string{webhookPort, metricsPort, healthPort, visibilityPort},
		Identity:     &identity,
		Grants:       []component.Grant{{Role: clusterRole}},
		ServingCerts: []component.ServingCert{webhookCert, visibilityCert},
		CRDs:         crds(),
		Conversion:   conversion,
		MemoryWeight: 10,
	}
}

// crds are Kueue's CRDs, every one of them: its controllers watch them all.
func crds() [][]byte {
	var out [][]byte
	files, _ := fs.Glob(crdFiles, "upstream/crds/*.yaml")
	for _, f := range files {
		b, _ := crdFiles.ReadFile(f)
		out = append(out, b)
	}
	return out
}

func args(d clusterdir.Dir, c *v1alpha1.Cluster) []string {
	vis := aggregatedapi.ServingFor(d, c.Status.Ports.Get(ComponentName, visibilityPort), visibilityCert.Name)
	return []string{
		"--kubeconfig=" + d.ComponentKubeconfig(identity.File),
		"--config=" + configFile(d),
		"--cert-dir=" + d.PKI(),
		"--cert-name=" + webhookCert.Name,
		"--visibility-port=" + strconv.Itoa(vis.Port),
		"--visibility-cert-file=" + vis.CertFile,
		"--visibility-key-file=" + vis.KeyFile,
		"--requestheader-client-ca-file=" + vis.ProxyCAFile,
		"--requestheader-allowed-names=" + strings.Join(vis.ProxyNames, ","),
	}
}

// configFile is Kueue's Configuration, written at each start.
func configFile(d clusterdir.Dir) string { return filepath.Join(d.Path, "kueue-config.yaml") }

// prepare writes Kueue's Configuration (configuration), and points the
// visibility API's registration at its port, should it have moved.
func prepare(d clusterdir.Dir, c *v1alpha1.Cluster) error {
	b, err := configuration(c)
	if err != nil {
		return err
	}
	if err := pki.WriteFile(configFile(d), b); err != nil {
		return err
	}
	return visibility.FollowPort(d, c.Status.Ports.Get(ComponentName, visibilityPort))
}

func loopbackPort(c *v1alpha1.Cluster, port string) string {
	return "127.0.0.1:" + strconv.Itoa(c.Status.Ports.Get(ComponentName, port))
}
