package supervisor

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterclock"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/component"
	"github.com/kubesim/kubesim/internal/controlplane"
	"github.com/kubesim/kubesim/internal/credentials"
	"github.com/kubesim/kubesim/internal/execcopy"
	"github.com/kubesim/kubesim/internal/kubeconfig"
)

// Restart backoff of a crashed component: doubles from min to max, and
// starts again from min once the component has run for resetAfter. It is
// cluster time (restartDelay): a component down for long on the
// cluster's clock misses renewals and grace periods as if it had crashed
// for that long in a real cluster.
const (
	minBackoff = 500 * time.Millisecond
	maxBackoff = 30 * time.Second
	resetAfter = time.Minute
	// stableAfter is how long a restarted component must run before it
	// no longer counts as crashing.
	stableAfter = 10 * time.Second
	stopTimeout = 15 * time.Second
)

// supervisor runs one cluster's components as child processes of itself.
type supervisor struct {
	dir    clusterdir.Dir
	exe    string
	logger *log.Logger

	mu  sync.Mutex // guards cfg, which restarts may change (ports)
	cfg *v1alpha1.Cluster

	// restart asks a running component to restart: one it depends on has
	// moved to another port, or the API server does not answer.
	restart map[string]chan restartRequest
	// restarted are the started channels of restarts asked for, by
	// component, until the component's next process starts (guarded by mu).
	restarted map[string][]chan struct{}
	outage    *outageGate
	startup   *startupRecord
	health    *healthRecord
}

// restartRequest says why a component is to restart, and whether to kill
// it rather than ask it to stop.
type restartRequest struct {
	reason string
	kill   bool
	// started, if set, is closed once the component has started again.
	started chan struct{}
}

// errRestart ends a run that was asked to restart.
var errRestart = errors.New("asked to restart")

// Supervise runs the cluster opts names until ctx ends (or the cluster's
// owner exits), then stops every component, last in the table first. It
// holds the cluster's lock throughout, so exactly one supervisor runs per
// cluster.
func Supervise(ctx context.Context, opts Options) error {
	d, err := clusterdir.Open(opts.Home, opts.Name)
	if err != nil {
		return err
	}
	health := newHealthRecord(d, LogNames())
	logs := newLogSink(Name, logWriter(d, Name), health.logProblem(Name))
	defer logs.Close()
	logger := log.New(logs, "supervisor: ", log.LstdFlags|log.Lmicroseconds)
	release, err := holdLock(d)
	if err != nil {
		return err
	}
	defer release()
	if err := health.begin(); err != nil {
		logger.Printf("cannot record the cluster's health: %v", err)
	}
	ctx, stopCluster := context.WithCancel(ctx)
	defer stopCluster()
	// At once: SIGUSR1 would otherwise end the process.
	upgrades := make(chan os.Signal, 1)
	signal.Notify(upgrades, upgradeSignal)
	defer signal.Stop(upgrades)

	cfg, err := d.Load()
	if err != nil {
		return err
	}
	if upgraded, err := controlplane.Upgrade(d, cfg); err != nil {
		return err
	} else if upgraded {
		if err := d.Save(cfg); err != nil {
			return err
		}
		logger.Printf("brought the cluster's files up to format %d", cfg.Status.FormatVersion)
	}
	if given, err := controlplane.GiveDeclared(d, cfg); err != nil {
		return fmt.Errorf("giving the cluster what its components need: %w", err)
	} else if given {
		if err := d.Save(cfg); err != nil {
			return err
		}
		logger.Printf("gave the cluster the ports its components declare and it lacked")
	}
	// Written again once this start has set the API server up.
	if err := os.Remove(controlplane.APIServerSetUpFile(d)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	exe, err := execcopy.Executable()
	if err != nil {
		return err
	}
	s := &supervisor{dir: d, exe: exe, logger: logger, cfg: cfg, restart: map[string]chan restartRequest{}, outage: newOutageGate(), startup: newStartupRecord(d), health: health}
	for _, comp := range controlplane.Components() {
		s.restart[comp.Name] = make(chan restartRequest, 1)
	}
	go s.stopWhenOwnerExits(ctx, stopCluster)
	egressCtx, stopEgress := context.WithCancel(context.Background())
	defer stopEgress()
	var comps []component.Component
	var routes []component.Route
	for _, comp := range controlplane.Components() {
		if comp.IsEnabled(cfg) {
			comps = append(comps, comp)
			routes = append(routes, comp.Routes...)
		}
	}
	if err := controlplane.ServeEgress(egressCtx, d, routes, logger.Printf); err != nil {
		return err
	}
	// stops[name] stops a started component and waits until it has.
	var stopsMu sync.Mutex
	stops := map[string]func(){}
	defer func() {
		stopsMu.Lock()
		defer stopsMu.Unlock()
		// In reverse table order, whatever the start order was: the
		// components after the API server stop while it still answers.
		for i := len(comps) - 1; i >= 0; i-- {
			if stopComp, ok := stops[comps[i].Name]; ok {
				stopComp()
			}
		}
		logger.Printf("all components stopped")
	}()
	// start runs comp, restarting it, until the cluster stops.
	start := func(comp component.Component) {
		stopsMu.Lock()
		defer stopsMu.Unlock()
		compCtx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		stops[comp.Name] = func() { cancel(); <-done }
		go func() {
			defer close(done)
			s.keepRunning(compCtx, comp)
		}()
	}
	if !runPlan(ctx, startPlan(comps), start, s.readyAndSetUp) {
		return nil
	}
	if err := markStarted(d); err != nil {
		return err
	}
	logger.Printf("%s", startedMark)
	s.startup.add(EventClusterStarted, "")
	go s.watchAPIServer(ctx)
	go s.serveUpgrades(ctx, comps, upgrades)
	<-ctx.Done()
	logger.Printf("stopping")
	return nil
}

// What the supervisor's log says as a cluster starts: "started NAME (pid
// …)", "NAME is ready", "NAME set up" and, when every component runs,
// "cluster started". The startup record says the same for programs.
const (
	readyMark   = "is ready"
	setUpMark   = "set up"
	startedMark = "cluster started"
)

func (s *supervisor) config() *v1alpha1.Cluster {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.DeepCopy()
}

// readyPoll is how often readiness is asked while a cluster starts: every
// wait costs half of it on average, and create waits on three.
const readyPoll = 25 * time.Millisecond

// readyAndSetUp waits for comp to be ready and then sets it up, as far as
// it has either; false means ctx ended first.
func (s *supervisor) readyAndSetUp(ctx context.Context, comp component.Component) bool {
	for _, step := range []struct {
		has         bool
		run         func(context.Context, component.Component)
		mark, event string
	}{
		{comp.Ready != nil, s.waitReady, readyMark, EventReady},
		{comp.Setup != nil, s.setup, setUpMark, EventSetUp},
	} {
		if !step.has {
			continue
		}
		step.run(ctx, comp)
		if ctx.Err() != nil {
			return false
		}
		s.logger.Printf("%s %s", comp.Name, step.mark)
		s.startup.add(step.event, comp.Name)
	}
	if comp.Serve != nil {
		go comp.Serve(ctx, s.dir, s.logger.Printf)
	}
	return true
}

// waitReady polls comp's readiness until it passes or ctx ends.
func (s *supervisor) waitReady(ctx context.Context, comp component.Component) {
	for comp.Ready(ctx, s.dir, s.config()) != nil {
		select {
		case <-ctx.Done():
			return
		case <-time.After(readyPoll):
		}
	}
}

// setup runs comp's setup until it succeeds or ctx ends.
func (s *supervisor) setup(ctx context.Context, comp component.Component) {
	for {
		err := comp.Setup(ctx, s.dir, s.config())
		if err == nil {
			return
		}
		s.logger.Printf("setting up after %s: %v (retrying)", comp.Name, err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// keepRunning runs comp until ctx ends, restarting it with backoff
// whenever it exits.
func (s *supervisor) keepRunning(ctx context.Context, comp component.Component) {
	backoff := minBackoff
	exits := 0 // since it last ran for stableAfter
	defer s.health.set(comp.Name, problemCrash, "")
	for {
		if comp.HeldDuringOutages && !s.waitForAPIServer(ctx, comp) {
			return
		}
		started := time.Now()
		stable := time.AfterFunc(stableAfter, func() { s.health.set(comp.Name, problemCrash, "") })
		err := s.runOnce(ctx, comp)
		stable.Stop()
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, errRestart) {
			continue
		}
		if time.Since(started) > resetAfter {
			backoff = minBackoff
		}
		if time.Since(started) > stableAfter {
			exits = 0
		}
		exits++
		s.health.set(comp.Name, problemCrash, crashProblem(exits, err))
		delay := restartDelay(backoff, s.config().Status.Clock)
		s.logger.Printf("%s exited (%v); restarting in %s (its log: %s)", comp.Name, err, delay, s.dir.Log(comp.Name))
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// restartDelay is backoff on the cluster's clock in real time, at least
// minRestartDelay: a process crashing at once is not started more often.
func restartDelay(backoff time.Duration, clock *v1alpha1.Clock) time.Duration {
	return max(clusterclock.RealTime(backoff, clock), minRestartDelay)
}

const minRestartDelay = 100 * time.Millisecond

// runOnce starts comp and waits for it to exit, or stops it when ctx ends.
func (s *supervisor) runOnce(ctx context.Context, comp component.Component) error {
	moved, err := s.ensurePortsFree(comp)
	if err != nil {
		return err
	}
	if moved && !comp.PortsPrivate {
		s.restartAfter(comp)
	}
	select {
	case req := <-s.restart[comp.Name]: // it is about to start with the new ports anyway
		s.awaitStart(comp.Name, req)
	default:
	}
	if comp.Prepare != nil {
		if err := comp.Prepare(s.dir, s.config()); err != nil {
			return err
		}
	}
	log := newLogSink(comp.Name, logWriter(s.dir, comp.Name), s.logProblem(comp.Name))
	defer log.Close()
	cfg := s.config()
	prog, args, err := controlplane.Command(s.exe, comp, s.dir, cfg)
	if err != nil {
		return err
	}
	// A copy of the binary (kubesim's, or a version's) read in small pages
	// (execcopy): each component then holds a fifth of the binary it did.
	if run, err := execcopy.For(prog); err != nil {
		s.logger.Printf("%s runs from %s, not a copy of it in small pages: %v", comp.Name, prog, err)
	} else {
		prog = run
	}
	cmd := exec.Command(prog, args...)
	out := withoutQuietLines(log, comp.Quiet)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = componentEnv(comp, controlplane.Components(), cfg)
	// Die with the supervisor, even if it is killed outright.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	s.logger.Printf("started %s (pid %d): %s", comp.Name, cmd.Process.Pid, strings.Join(cmd.Args, " "))
	s.announceStart(comp.Name)
	s.startup.add(EventStarted, comp.Name)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var stopped error
	stop := syscall.SIGTERM
	select {
	case err := <-exited:
		return err
	case <-ctx.Done():
	case req := <-s.restart[comp.Name]:
		s.awaitStart(comp.Name, req)
		s.logger.Printf("restarting %s: %s", comp.Name, req.reason)
		stopped = errRestart
		if req.kill {
			stop = syscall.SIGKILL
		}
	}
	_ = cmd.Process.Signal(stop)
	select {
	case <-exited:
	case <-time.After(stopTimeout):
		s.logger.Printf("%s did not stop within %s; killing it", comp.Name, stopTimeout)
		_ = cmd.Process.Kill()
		<-exited
	}
	s.logger.Printf("stopped %s", comp.Name)
	return stopped
}

// restartAfter asks every component started after comp to restart: each
// may hold comp's old address (the API server etcd's, the others the API
// server's, in their kubeconfigs).
func (s *supervisor) restartAfter(comp component.Component) {
	all := controlplane.Components()
	i := slices.IndexFunc(all, func(c component.Component) bool { return c.Name == comp.Name })
	for _, later := range all[i+1:] {
		s.askRestart(later.Name, restartRequest{reason: "a component it depends on moved to another port"})
	}
}

// awaitStart keeps req's started channel until name next starts.
func (s *supervisor) awaitStart(name string, req restartRequest) {
	if req.started == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.restarted == nil {
		s.restarted = map[string][]chan struct{}{}
	}
	s.restarted[name] = append(s.restarted[name], req.started)
}

// announceStart closes the started channels name's restarts left.
func (s *supervisor) announceStart(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.restarted[name] {
		close(c)
	}
	delete(s.restarted, name)
}

// askRestart asks the component called name to restart, unless it has
// been asked already.
func (s *supervisor) askRestart(name string, req restartRequest) {
	select {
	case s.restart[name] <- req:
	default:
	}
}

// ensurePortsFree moves any of comp's ports that another process has taken
// since they were chosen to a free one, and rewrites the config and
// kubeconfigs to match — the user's too, if the API server moved; it
// reports whether it moved one. A port the user asked for is never moved.
func (s *supervisor) ensurePortsFree(comp component.Component) (moved bool, err error) {
	moved, apiServerMoved, err := s.movePortsTaken(comp)
	if err == nil && apiServerMoved {
		s.followInUserKubeconfig(s.config())
	}
	return moved, err
}

// movePortsTaken is ensurePortsFree but for the user's kubeconfig; it
// also reports whether the API server's port moved.
func (s *supervisor) movePortsTaken(comp component.Component) (moved, apiServerMoved bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, name := range comp.Ports {
		port := s.cfg.Status.Ports.Get(comp.Name, name)
		if controlplane.PortFree(port) {
			continue
		}
		isAPIServer := comp.Name == controlplane.KubeAPIServer && name == ""
		if isAPIServer && s.cfg.Networking.APIServerPort != 0 {
			return false, false, fmt.Errorf("networking.apiServerPort: port %d is in use by another process", port)
		}
		free, err := controlplane.FreePorts(1, controlplane.UsedPorts(s.cfg))
		if err != nil {
			return false, false, err
		}
		s.logger.Printf("%s: port %d is taken by another process; moving to %d", comp.Name, port, free[0])
		s.cfg.Status.Ports.Set(comp.Name, name, free[0])
		moved, apiServerMoved = true, apiServerMoved || isAPIServer
	}
	if !moved {
		return false, false, nil
	}
	if err := s.dir.Save(s.cfg); err != nil {
		return false, false, err
	}
	return true, apiServerMoved, credentials.WriteKubeconfigs(s.dir, s.cfg, controlplane.Identities())
}

// followInUserKubeconfig points the cluster's context in the user's
// kubeconfig (the file create or the last start merged it into) at the
// API server's port in cfg. It changes that context alone, and not the
// current context; one the user has taken out stays out. What fails is
// logged: the cluster runs on, and the next start merges the context
// again.
func (s *supervisor) followInUserKubeconfig(cfg *v1alpha1.Cluster) {
	name := credentials.ContextName(cfg.Name)
	path, err := credentials.UserKubeconfig(s.dir)
	if errors.Is(err, os.ErrNotExist) {
		s.logger.Printf("the cluster does not say which kubeconfig holds its context %s (it was made by an older kubesim and not started since); the next start updates it", name)
		return
	}
	if err != nil {
		s.logger.Printf("not updating context %s: %v", name, err)
		return
	}
	ours, err := credentials.AdminContext(s.dir, cfg)
	if err != nil {
		s.logger.Printf("not updating context %s in %s: %v", name, path, err)
		return
	}
	var had bool
	tightenedFrom, err := kubeconfig.Edit(path, func(doc *kubeconfig.Doc) (err error) {
		had, err = doc.Update(ours, name)
		return err
	})
	switch {
	case err != nil:
		s.logger.Printf("updating context %s in %s to the API server's new port failed: %v (the next start updates it)", name, path, err)
	case !had:
		s.logger.Printf("%s has no context %s to update", path, name)
	default:
		s.logger.Printf("updated context %s in %s to %s", name, path, credentials.APIServerURL(cfg))
	}
	if tightenedFrom != 0 {
		s.logger.Printf("note: %s was mode %04o; it holds an admin key, so it is 0600 now", path, tightenedFrom)
	}
}
