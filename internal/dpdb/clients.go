package dpdb

import (
	"errors"
	"fmt"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Clients are what the controller and its webhook talk to: this
// cluster's API server, and the other clusters of the federation.
type Clients struct {
	// Kube reads PDBs, pods, the federation Secret and the lock Leases,
	// and writes child PDBs.
	Kube kubernetes.Interface
	// Dynamic lists and watches DPDBs and writes their status.
	Dynamic dynamic.Interface
	// Member builds the client of another cluster from the kubeconfig
	// the federation Secret holds for it.
	Member func(*rest.Config) (kubernetes.Interface, error)
}

// ClientsFor builds the clients of the cluster kubeconfig reaches, or of
// the cluster the controller runs in when kubeconfig is empty.
func ClientsFor(kubeconfig string) (Clients, error) {
	cfg, err := restConfig(kubeconfig)
	if err != nil {
		return Clients{}, err
	}
	cfg.QPS, cfg.Burst = 200, 400
	kube, err1 := kubernetes.NewForConfig(cfg)
	dyn, err2 := dynamic.NewForConfig(cfg)
	if err := errors.Join(err1, err2); err != nil {
		return Clients{}, err
	}
	return Clients{Kube: kube, Dynamic: dyn, Member: newMemberClient}, nil
}

func newMemberClient(cfg *rest.Config) (kubernetes.Interface, error) {
	return kubernetes.NewForConfig(cfg)
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("--kubeconfig: not given, and not running in a cluster: %w", err)
		}
		return cfg, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig: %w", err)
	}
	return cfg, nil
}
