package karpenter

import (
	"fmt"
	"os"
	"strings"

	"github.com/samber/lo"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/nodecost"

	kwok "sigs.k8s.io/karpenter/kwok/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/cloudprovider/overlay"
	"sigs.k8s.io/karpenter/pkg/controllers"
	"sigs.k8s.io/karpenter/pkg/controllers/node/health"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/operator"
)

// run is Karpenter's process: its operator, the KWOK cloud provider with
// the instance types of its catalog, wrapped for NodeOverlays, the
// cluster state and its controllers, as upstream's kwok/main.go builds
// them, but for a provider that launches a NodeClaim once (launcher) and
// the client it creates nodes with (bootClient).
// Karpenter reads its options from the command line (and its
// environment) itself; its client reads KUBECONFIG, which kubesim's
// --kubeconfig, first, sets.
func run(args []string) int {
	kubeconfig, ok := "", len(args) > 0
	if ok {
		kubeconfig, ok = strings.CutPrefix(args[0], "--kubeconfig=")
	}
	if !ok {
		fmt.Fprintln(os.Stderr, "karpenter: --kubeconfig=FILE must come first")
		return 2
	}
	if err := os.Setenv("KUBECONFIG", kubeconfig); err != nil {
		fmt.Fprintf(os.Stderr, "karpenter: %v\n", err)
		return 1
	}
	os.Args = append([]string{ComponentName}, args[1:]...)

	ctx, op := operator.NewOperator()
	instanceTypes, err := kwok.ConstructInstanceTypes(ctx)
	if err != nil {
		log.FromContext(ctx).Error(err, "failed constructing instance types")
		return 1
	}
	undecorated := launcher{kwok.NewCloudProvider(ctx, bootClient{op.GetClient()}, instanceTypes), op.GetClient()}
	cloudProvider := overlay.Decorate(undecorated, op.GetClient(), op.InstanceTypeStore)
	repairPolicies := lo.Must(health.NewRepairPolicyMatcher(ctx, cloudProvider))
	clusterState := state.NewCluster(op.Clock, op.GetClient(), cloudProvider, state.WithRepairPolicyMatcher(repairPolicies))
	go func() { // the ledger of its nodes, for get cost; one it cannot write is a restart
		if err := nodecost.Record(ctx, op.KubernetesInterface, clusterdir.OfComponentKubeconfig(kubeconfig).NodeLedger()); err != nil {
			log.FromContext(ctx).Error(err, "recording the nodes' ledger")
			os.Exit(1)
		}
	}()
	op.WithControllers(ctx, controllers.NewControllers(ctx, op.Manager, op.Clock, op.GetClient(), op.EventRecorder,
		cloudProvider, undecorated, clusterState, op.InstanceTypeStore, op.PredictionStore)...).Start(ctx)
	return 0
}
