package kueue

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"

	"github.com/spf13/pflag"
	resourceapi "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueuev1alpha1 "sigs.k8s.io/kueue/apis/kueue/v1alpha1"
	kueuev1beta1 "sigs.k8s.io/kueue/apis/kueue/v1beta1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	qcache "sigs.k8s.io/kueue/pkg/cache/queue"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/config"
	"sigs.k8s.io/kueue/pkg/constants"
	"sigs.k8s.io/kueue/pkg/controller/concurrentadmission"
	"sigs.k8s.io/kueue/pkg/controller/core"
	"sigs.k8s.io/kueue/pkg/controller/core/indexer"
	"sigs.k8s.io/kueue/pkg/controller/elasticjobs"
	"sigs.k8s.io/kueue/pkg/controller/failurerecovery"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	"sigs.k8s.io/kueue/pkg/controller/tas"
	tasindexer "sigs.k8s.io/kueue/pkg/controller/tas/indexer"
	"sigs.k8s.io/kueue/pkg/dra"
	"sigs.k8s.io/kueue/pkg/features"
	"sigs.k8s.io/kueue/pkg/metrics"
	"sigs.k8s.io/kueue/pkg/resources"
	"sigs.k8s.io/kueue/pkg/scheduler"
	preemptexpectations "sigs.k8s.io/kueue/pkg/scheduler/preemption/expectations"
	"sigs.k8s.io/kueue/pkg/scheduler/preemption/fairsharing"
	utildra "sigs.k8s.io/kueue/pkg/util/dra"
	"sigs.k8s.io/kueue/pkg/util/kubeversion"
	"sigs.k8s.io/kueue/pkg/util/waitforpodsready"
	"sigs.k8s.io/kueue/pkg/webhooks"

	"github.com/kubesim/kubesim/internal/aggregatedapi"

	// The batch/v1 Job integration, the one kubesim runs (Kueue's
	// default; jobs/pod comes with pkg/config).
	_ "sigs.k8s.io/kueue/pkg/controller/jobs/job"
)

// run is Kueue's manager, assembled as upstream's cmd/kueue/main.go
// assembles it for the parts a kubesim cluster has: its caches and queues,
// the core controllers, the Job integration, the webhooks and its
// scheduler, in one process without leader election, serving its webhooks
// with the cluster CA's certificate on loopback. Left out: MultiKueue (no
// worker clusters), the ProvisioningRequest admission check (no cluster
// autoscaler serves the API) and the certificate rotator.
func run(args []string) int {
	fs := pflag.NewFlagSet(ComponentName, pflag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "the component's kubeconfig")
	configFile := fs.String("config", "", "Kueue's Configuration (kubesim writes it at each start)")
	certDir := fs.String("cert-dir", "", "the directory of the webhooks' serving certificate")
	certName := fs.String("cert-name", "", "the serving certificate's name: NAME.crt and NAME.key")
	var vis aggregatedapi.Serving
	fs.IntVar(&vis.Port, "visibility-port", 0, "the visibility API's loopback port")
	fs.StringVar(&vis.CertFile, "visibility-cert-file", "", "the visibility API's serving certificate")
	fs.StringVar(&vis.KeyFile, "visibility-key-file", "", "its key")
	fs.StringVar(&vis.ProxyCAFile, "requestheader-client-ca-file", "", "CA of the API server's front-proxy client certificate")
	fs.StringSliceVar(&vis.ProxyNames, "requestheader-allowed-names", nil, "common names of the API server's front-proxy client certificate")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctrl.SetLogger(klog.NewKlogr())
	if err := start(ctrl.SetupSignalHandler(), *kubeconfig, *configFile, *certDir, *certName, vis); err != nil {
		fmt.Fprintf(os.Stderr, "kueue: %v\n", err)
		return 1
	}
	return 0
}

func newScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, schedulingv1.AddToScheme, resourceapi.AddToScheme,
		kueue.AddToScheme, kueuev1beta1.AddToScheme, kueuev1alpha1.AddToScheme, configapi.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	err := jobframework.ForEachIntegration(func(_ string, cb jobframework.IntegrationCallbacks) error {
		if cb.AddToScheme != nil {
			return cb.AddToScheme(scheme)
		}
		return nil
	})
	return scheme, err
}

func start(ctx context.Context, kubeconfig, configFile, certDir, certName string, vis aggregatedapi.Serving) error {
	scheme, err := newScheme()
	if err != nil {
		return err
	}
	options, cfg, err := config.Load(scheme, configFile)
	if err != nil {
		return fmt.Errorf("its configuration: %w", err)
	}
	if err := config.LoadAndValidateFeatureGates("", cfg.FeatureGates).ToAggregate(); err != nil {
		return fmt.Errorf("its feature gates: %w", err)
	}
	if err := config.Validate(&cfg, scheme).ToAggregate(); err != nil {
		return fmt.Errorf("its configuration: %w", err)
	}
	// kubesim's certificate, on loopback. No client certificate is asked
	// for: the API server presents none on CRD conversion calls.
	options.WebhookServer = webhook.NewServer(webhook.Options{
		Host: cfg.Webhook.Host, Port: *cfg.Webhook.Port,
		CertDir: certDir, CertName: certName + ".crt", KeyName: certName + ".key",
	})
	options.Metrics = metricsserver.Options{BindAddress: cfg.Metrics.BindAddress}
	metrics.Register()

	kubeConfig, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	kubeConfig.UserAgent = constants.KueueName
	// No client-side limit unless the Configuration sets one, as
	// controller-runtime's own config loader (upstream's) leaves it:
	// client-go's default would hold Kueue to 5 requests a second.
	kubeConfig.QPS = -1
	if *cfg.ClientConnection.QPS >= 0 {
		kubeConfig.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(*cfg.ClientConnection.QPS, int(*cfg.ClientConnection.Burst))
	}
	mgr, err := ctrl.NewManager(kubeConfig, options)
	if err != nil {
		return err
	}

	resourceFormatter := resources.NewResourceFormatter()
	cacheOptions := []schdcache.Option{
		schdcache.WithPodsReadyTracking(waitforpodsready.Enabled(cfg.WaitForPodsReady) && ptrTrue(cfg.WaitForPodsReady.BlockAdmission)),
		schdcache.WithResourceMetrics(cfg.Metrics.EnableClusterQueueResources),
		schdcache.WithLocalQueueMetrics(metrics.NewLocalQueueMetricsConfig(cfg.Metrics.LocalQueueMetrics)),
		schdcache.WithResourceFormatter(resourceFormatter),
	}
	queueOptions := []qcache.Option{
		qcache.WithPodsReadyRequeuingTimestamp(requeuingTimestamp(&cfg)),
		qcache.WithLocalQueueMetrics(metrics.NewLocalQueueMetricsConfig(cfg.Metrics.LocalQueueMetrics)),
		qcache.WithResourceMetrics(cfg.Metrics.EnableClusterQueueResources),
		qcache.WithResourceFormatter(resourceFormatter),
	}
	if r := cfg.Resources; r != nil {
		if len(r.ExcludeResourcePrefixes) > 0 {
			cacheOptions = append(cacheOptions, schdcache.WithExcludedResourcePrefixes(r.ExcludeResourcePrefixes))
			queueOptions = append(queueOptions, qcache.WithExcludedResourcePrefixes(r.ExcludeResourcePrefixes))
		}
		if len(r.Transformations) > 0 {
			cacheOptions = append(cacheOptions, schdcache.WithResourceTransformations(r.Transformations))
			queueOptions = append(queueOptions, qcache.WithResourceTransformations(r.Transformations))
		}
	}
	var draMapper *dra.ResourceMapper
	var draBacked *dra.ExtendedResourceCache
	if features.Enabled(features.KueueDRAIntegration) {
		draMapper, draBacked = dra.NewResourceMapper(), dra.NewExtendedResourceCache()
		if cfg.Resources != nil && len(cfg.Resources.DeviceClassMappings) > 0 {
			if err := draMapper.PopulateFromConfiguration(cfg.Resources.DeviceClassMappings); err != nil {
				return fmt.Errorf("resources.deviceClassMappings: %w", err)
			}
			for _, name := range append(draMapper.CounterBasedResourceNames(), draMapper.CapacityBasedResourceNames()...) {
				resourceFormatter.RegisterBinaryFormattedResource(name)
			}
		}
		queueOptions = append(queueOptions, qcache.WithDRABackedResources(draBacked))
	}
	if cfg.FairSharing != nil {
		cacheOptions = append(cacheOptions, schdcache.WithFairSharing(fairsharing.Enabled(cfg.FairSharing)))
	}
	if cfg.AdmissionFairSharing != nil {
		queueOptions = append(queueOptions, qcache.WithAdmissionFairSharing(cfg.AdmissionFairSharing))
		cacheOptions = append(cacheOptions, schdcache.WithAdmissionFairSharing(cfg.AdmissionFairSharing))
	}
	cCache := schdcache.New(mgr.GetClient(), cacheOptions...)
	requeuer := qcache.NewRequeuer()
	if err := mgr.Add(requeuer); err != nil {
		return err
	}
	expectations := preemptexpectations.New()
	queueOptions = append(queueOptions, qcache.WithPreemptionExpectations(expectations))
	queues := qcache.NewManager(mgr.GetClient(), cCache, requeuer, queueOptions...)

	sliceAPI := utildra.CheckResourceSliceAPIAvailable(mgr)
	if err := setupIndexes(ctx, mgr, &cfg, sliceAPI); err != nil {
		return fmt.Errorf("its indexes: %w", err)
	}
	discoveryClient, err := discovery.NewDiscoveryClientForConfig(kubeConfig)
	if err != nil {
		return err
	}
	versions := kubeversion.NewServerVersionFetcher(discoveryClient)
	if err := mgr.Add(versions); err != nil {
		return err
	}
	if err := versions.FetchServerVersion(); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	// Ready once the webhooks serve: kubesim registers them then.
	if err := mgr.AddReadyzCheck("readyz", func(req *http.Request) error { return mgr.GetWebhookServer().StartedChecker()(req) }); err != nil {
		return err
	}

	if name, err := core.SetupControllers(mgr, queues, cCache, &cfg, core.SetupControllersOpts{
		PreemptionExpectations: expectations, DRAMapper: draMapper, DRABackedResources: draBacked,
		ResourceFormatter: resourceFormatter, ResourceSliceAPIAvailable: sliceAPI,
	}); err != nil {
		return fmt.Errorf("controller %s: %w", name, err)
	}
	if err := setupGatedControllers(mgr, queues, cCache, &cfg); err != nil {
		return err
	}
	nsSelector, err := metav1.LabelSelectorAsSelector(cfg.ManagedJobsNamespaceSelector)
	if err != nil {
		return fmt.Errorf("managedJobsNamespaceSelector: %w", err)
	}
	if err := jobframework.SetupControllers(ctx, mgr, ctrl.Log.WithName("setup"),
		jobframework.WithManageJobsWithoutQueueName(cfg.ManageJobsWithoutQueueName),
		jobframework.WithWaitForPodsReady(cfg.WaitForPodsReady),
		jobframework.WithKubeServerVersion(versions),
		jobframework.WithEnabledFrameworks(cfg.Integrations.Frameworks),
		jobframework.WithEnabledExternalFrameworks(cfg.Integrations.ExternalFrameworks),
		jobframework.WithManagerName(constants.KueueName),
		jobframework.WithLabelKeysToCopy(sets.New(cfg.Integrations.LabelKeysToCopy...)),
		jobframework.WithAnnotationsToCopy(sets.New[string]()),
		jobframework.WithCache(cCache),
		jobframework.WithQueues(queues),
		jobframework.WithObjectRetentionPolicies(cfg.ObjectRetentionPolicies),
		jobframework.WithManagedJobsNamespaceSelector(nsSelector),
	); err != nil {
		return fmt.Errorf("the job integrations: %w", err)
	}
	if name, err := webhooks.Setup(mgr, nil); err != nil {
		return fmt.Errorf("webhook %s: %w", name, err)
	}
	go queues.CleanUpOnContext(ctx)
	go cCache.CleanUpOnContext(ctx)
	if features.Enabled(features.VisibilityOnDemand) {
		go func() { // as upstream's: without it, the process ends
			if err := serveVisibility(ctx, queues, vis); err != nil {
				fmt.Fprintf(os.Stderr, "kueue: the visibility API: %v\n", err)
				os.Exit(1)
			}
		}()
	}

	sched := scheduler.New(queues, cCache, mgr.GetClient(), mgr.GetEventRecorder(constants.AdmissionName),
		scheduler.WithPodsReadyRequeuingTimestamp(requeuingTimestamp(&cfg)),
		scheduler.WithFairSharing(cfg.FairSharing),
		scheduler.WithAdmissionFairSharing(cfg.AdmissionFairSharing),
		scheduler.WithQuotaCheckStrategy(quotaCheckStrategy(&cfg)),
		scheduler.WithPreemptionExpectations(expectations),
		scheduler.WithResourceFormatter(resourceFormatter),
	)
	if err := mgr.Add(sched); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// setupIndexes are the field indexes of the controllers that run.
func setupIndexes(ctx context.Context, mgr ctrl.Manager, cfg *configapi.Configuration, sliceAPI bool) error {
	if err := indexer.Setup(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	if features.Enabled(features.TopologyAwareScheduling) {
		if err := tasindexer.SetupIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
			return err
		}
	}
	if sliceAPI {
		if err := core.SetupResourceSliceIndexer(ctx, mgr.GetFieldIndexer()); err != nil {
			return err
		}
	}
	return jobframework.SetupIndexes(ctx, mgr.GetFieldIndexer(), jobframework.WithEnabledFrameworks(cfg.Integrations.Frameworks))
}

// setupGatedControllers are the controllers of Kueue's feature gates, as
// upstream sets them up; MultiKueue is refused by kubesim's Prepare.
func setupGatedControllers(mgr ctrl.Manager, queues *qcache.Manager, cCache *schdcache.Cache, cfg *configapi.Configuration) error {
	var name string
	var err error
	if features.Enabled(features.FailureRecoveryPolicy) {
		if name, err = failurerecovery.SetupControllers(mgr, cfg, nil); err != nil {
			return fmt.Errorf("controller %s: %w", name, err)
		}
	}
	if features.Enabled(features.TopologyAwareScheduling) {
		if name, err = tas.SetupControllers(mgr, queues, cCache, cfg, nil); err != nil {
			return fmt.Errorf("controller %s: %w", name, err)
		}
	}
	if features.Enabled(features.ElasticJobsViaWorkloadSlices) {
		if name, err = elasticjobs.SetupWithManager(mgr, cfg, nil); err != nil {
			return fmt.Errorf("controller %s: %w", name, err)
		}
	}
	if features.Enabled(features.ConcurrentAdmission) {
		if name, err = concurrentadmission.SetupControllers(mgr, queues, cfg, nil); err != nil {
			return fmt.Errorf("controller %s: %w", name, err)
		}
	}
	if features.Enabled(features.MultiKueue) || features.Enabled(features.SchedulerLibraryIntegration) {
		return errors.New("the MultiKueue and SchedulerLibraryIntegration feature gates are not offered in kubesim: leave them off")
	}
	return nil
}

func ptrTrue(b *bool) bool { return b != nil && *b }

// requeuingTimestamp and quotaCheckStrategy are upstream's reading of
// its Configuration.
func requeuingTimestamp(cfg *configapi.Configuration) configapi.RequeuingTimestamp {
	if w := cfg.WaitForPodsReady; w != nil && w.RequeuingStrategy != nil && w.RequeuingStrategy.Timestamp != nil {
		return *w.RequeuingStrategy.Timestamp
	}
	return configapi.EvictionTimestamp
}

func quotaCheckStrategy(cfg *configapi.Configuration) configapi.QuotaCheckStrategy {
	if features.Enabled(features.QuotaCheckStrategy) && cfg.Resources != nil && cfg.Resources.QuotaCheckStrategy != nil {
		return *cfg.Resources.QuotaCheckStrategy
	}
	return configapi.QuotaCheckBlockUndeclared
}
