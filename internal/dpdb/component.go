package dpdb

import (
	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/deploy"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/component"
	"github.com/kubesim/kubesim/internal/credentials"
	"github.com/spf13/pflag"
)

// ComponentName is the controller's process in a kubesim cluster.
const ComponentName = "dpdb-controller"

// The controller's client, the certificate its webhook serves, and who
// other clusters of a federation are here.
var (
	identity           = component.Identity{File: ComponentName, User: "kubesim:dpdb-controller"}
	webhookCert        = component.ServingCert{Name: "dpdb-webhook", CommonName: "kubesim-dpdb-webhook"}
	federationIdentity = component.Identity{File: "dpdb-federation", User: FederationUser}
)

// FederationUser is who other clusters of a DPDB federation are here.
const FederationUser = "kubesim:dpdb-federation"

// Component is the controller as a process of a kubesim cluster. Its
// webhook must serve before the cluster counts as started; its process
// starts with the API server's, so it does.
func Component() component.Component {
	return component.Component{
		Name: ComponentName,
		Main: component.Main(ComponentName, DefaultOptions, Run),
		Args: component.OwnArgs(componentOptions),
		// `create cluster`'s flags of the options it reads.
		Flags: []component.Flag{
			{Name: "disable-dpdb-controller", Usage: "run no DistributedPodDisruptionBudget controller (the CRD is installed; run one from deploy/dpdb)",
				Lands: component.At((*pflag.FlagSet).BoolVar, func(s *v1alpha1.ClusterSpec) *bool { return &s.DisableDPDBController })},
		},
		Enabled:      func(c *v1alpha1.Cluster) bool { return !c.DisableDPDBController },
		Prepare:      followWebhookPort,
		StartAfter:   "etcd",
		Ready:        component.Listening(ComponentName, ""),
		Setup:        registerWebhook,
		Ports:        []string{""},
		MemoryWeight: 5,
		Identity:     &identity,
		ServingCerts: []component.ServingCert{webhookCert},
		Grants: []component.Grant{
			{Role: deploy.DPDBClusterRole},
			{Role: deploy.DPDBNamespaceRole, Namespace: DefaultNamespace},
			{Role: deploy.FederationClusterRole, User: FederationUser},
			{Role: deploy.FederationLeasesRole, User: FederationUser, Namespace: DefaultNamespace},
		},
		CRDs: [][]byte{deploy.DPDBCRD},
	}
}

func componentOptions(d clusterdir.Dir, c *v1alpha1.Cluster) *Options {
	o := DefaultOptions()
	o.Kubeconfig = d.ComponentKubeconfig(identity.File)
	o.ClusterName = c.Name
	o.WebhookPort = c.Status.Ports.Get(ComponentName, "")
	o.WebhookCertFile = credentials.Path(d, webhookCert.Name+".crt")
	o.WebhookKeyFile = credentials.Path(d, webhookCert.Name+".key")
	// Only the API server may call it (its kube-apiserver entry issues
	// the certificate and presents it to webhooks).
	o.WebhookClientCA = credentials.CAFile(d)
	return &o
}

// FederationKubeconfig is a kubeconfig for this cluster that other
// clusters of a DPDB federation use: its identity (FederationUser) may
// only read PodDisruptionBudgets and take lock Leases in kubesim-dpdb.
func FederationKubeconfig(d clusterdir.Dir, c *v1alpha1.Cluster) ([]byte, error) {
	return credentials.Kubeconfig(d, c, federationIdentity)
}
