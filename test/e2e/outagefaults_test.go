//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// killAndWaitBack kill -9s the cluster's components and waits until each
// runs again (a new process) and the API server answers.
func (e *env) killAndWaitBack(cluster string, components ...string) {
	e.t.Helper()
	pids := map[string]int{}
	for _, comp := range components {
		if pids[comp] = e.componentPID(cluster, comp); pids[comp] == 0 {
			e.t.Fatalf("no %s process", comp)
		}
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			e.t.Fatal(err)
		}
	}
	client := e.client()
	eventually(e.t, 2*time.Minute, strings.Join(components, ", ")+" back", func() error {
		for comp, old := range pids {
			if pid := e.componentPID(cluster, comp); pid == 0 || pid == old {
				return fmt.Errorf("%s not restarted", comp)
			}
		}
		_, err := client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{Limit: 1})
		return err
	})
}

// TestTimeScaleAPIServerKilled: on a scaled clock a killed API server used
// to flap every node — the supervisor's outage guard and restart backoff
// ran on real time, 20× too slow at 20× (issue 47). At 10× and 60×, three
// kill -9s of the API server and a freeze of three grace periods of
// cluster time, and then a default eviction toleration of cluster time,
// leave every node Ready and every pod in place. 60x runs 10 nodes, the
// most docs/time.md says it keeps upstream's timings for on 2 cores.
func TestTimeScaleAPIServerKilled(t *testing.T) {
	for _, run := range []struct{ scale, nodes int }{{10, 20}, {60, 10}} {
		scale := run.scale
		t.Run(fmt.Sprintf("%dx", scale), func(t *testing.T) {
			e := newEnvAlone(t)
			name := fmt.Sprintf("kill%d", scale)
			e.createCluster(name, "--time-scale", strconv.Itoa(scale), "--nodes", strconv.Itoa(run.nodes))
			client := e.client()
			if _, err := client.AppsV1().Deployments("default").Create(context.Background(), deployment("web", 200), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			waitPods(t, client, "app=web", 200)
			flaps := watchFlaps(t, client)
			// Killed again and again, as a crash loop would: the restart
			// backoff grows.
			for range 3 {
				e.killAndWaitBack(name, "kube-apiserver")
			}
			// The outage itself: 150s of cluster time, the API server
			// frozen (its clients wait rather than fail at once).
			pid := e.componentPID(name, "kube-apiserver")
			if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			time.Sleep(150 * time.Second / time.Duration(scale))
			if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
			// The controller-manager judges nodes within a grace period
			// (50s) and evicts after the 300s toleration: 360s of cluster
			// time covers both.
			clock := e.clusterClock(name)
			until := clock.Now(time.Now()).Add(360 * time.Second)
			eventually(t, 2*time.Minute, "360s of cluster time", func() error {
				if now := clock.Now(time.Now()); now.Before(until) {
					return fmt.Errorf("cluster time %s", now)
				}
				return nil
			})
			if seen := flaps(); len(seen) > 0 {
				t.Errorf("after three kills and a freeze of the API server at %d×:\n%s", scale, strings.Join(seen, "\n"))
			}
			waitPods(t, client, "app=web", 200)
		})
	}
}

// TestUserStagesAfterOutage: a simulator that started while the API
// server was down used to give up on the Stage CRD and ignore the user's
// Stages for good (issue 47). Killed together with the API server, it
// comes back following them.
func TestUserStagesAfterOutage(t *testing.T) {
	e := newEnv(t)
	e.createCluster("outage", "--nodes", "1")
	e.apply(labelledPendingStage("marked", `{phase: Running, conditions: [{type: Ready, status: "True"}, {type: example.com/Marked, status: "True"}]}`))
	waitStageAccepted(t, e, "marked")
	for range 2 {
		e.killAndWaitBack("outage", "kube-apiserver", "kubelet-sim")
	}
	client := e.client()
	// The simulator may still be starting: a pod it has not seen yet is
	// only met by the stages it follows.
	eventually(t, time.Minute, "a pod marked by the user's Stage", func() error {
		name := fmt.Sprintf("marked-%d", time.Now().UnixNano())
		p := testPod(name)
		p.Labels = map[string]string{"marked": "true"}
		if _, err := client.CoreV1().Pods("default").Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
			return err
		}
		waitPhase(t, client, name, corev1.PodRunning)
		if conditionStatus(getPod(t, client, name), "example.com/Marked") != "True" {
			return errors.New("Running without the user's Stage")
		}
		return nil
	})
}

// TestSupervisorKilled: a cluster whose supervisor was killed showed
// `stopped` as if stopped on purpose (issue 47). It says the supervisor
// died and what brings the cluster back; start does, and a stop after is
// a plain stop again.
func TestSupervisorKilled(t *testing.T) {
	e := newEnv(t)
	e.createCluster("orphan")
	pidFile, err := os.ReadFile(filepath.Join(e.clusterDir("orphan"), "supervisor.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.Fields(string(pidFile) + " 0")[0])
	if pid == 0 {
		t.Fatalf("no supervisor pid in %q", pidFile)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the cluster stopped, its supervisor said dead", e.statusIs("orphan", "stopped",
		"its supervisor died", "kubesim start cluster --name orphan"))
	if table := e.must("get", "clusters").stdout; !strings.Contains(table, "stopped (its supervisor died") {
		t.Errorf("get clusters:\n%s", table)
	}
	e.must("start", "cluster", "--name", "orphan")
	if status, cause := e.clusterStatus("orphan"); status != "running" || cause != "" {
		t.Errorf("after start: %s (%s)", status, cause)
	}
	e.must("stop", "cluster", "--name", "orphan")
	if status, cause := e.clusterStatus("orphan"); status != "stopped" || cause != "" {
		t.Errorf("after stop: %s (%s)", status, cause)
	}
}
