package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/cluster"
	"github.com/kubesim/kubesim/internal/clusterdir"
	"github.com/kubesim/kubesim/internal/supervisor"
)

// LifecycleSteps are the steps Lifecycle times, in order.
var LifecycleSteps = []string{"create", "stop", "start", "delete"}

// Lifecycle times create (until ready), stop, start (until ready) and
// delete of a throwaway cluster, runs times, and prints a table to w: a
// row as each run ends, then the median of each step.
func Lifecycle(ctx context.Context, home string, runs int, w io.Writer) error {
	p, cleanup, err := throwawayProvider(home, io.Discard)
	if err != nil {
		return err
	}
	defer cleanup()
	fmt.Fprintf(w, "%-8s", "RUN")
	for _, step := range LifecycleSteps {
		fmt.Fprintf(w, "%10s", strings.ToUpper(step))
	}
	fmt.Fprintln(w)
	var rows, phases [][]time.Duration
	for run := 1; run <= runs; run++ {
		took, phase, err := lifecycleRun(ctx, p, fmt.Sprintf("bench-%d-%d", os.Getpid(), run))
		if err != nil {
			return err
		}
		rows, phases = append(rows, took), append(phases, phase)
		printLifecycleRow(w, strconv.Itoa(run), took)
	}
	printLifecycleRow(w, "median", medians(rows))
	fmt.Fprint(w, "\ncreate by phase (median):")
	for i, d := range medians(phases) {
		name := "default ServiceAccount after create"
		if i < len(CreatePhases) {
			name = CreatePhases[i].Name
		}
		fmt.Fprintf(w, "  %s %.2fs", name, d.Seconds())
	}
	fmt.Fprintln(w)
	return nil
}

// lifecycleRun creates, stops, starts and deletes one cluster and returns
// how long each step took, and create's phases (CreatePhases, then how
// long after create the default ServiceAccount took to appear).
func lifecycleRun(ctx context.Context, p *cluster.Provider, name string) (took, phases []time.Duration, err error) {
	var created time.Time
	steps := []func() error{
		func() error {
			if err := p.Create(ctx, &v1alpha1.Cluster{Name: name}, cluster.CreateOptions{Wait: clusterWait}); err != nil {
				return err
			}
			created = time.Now()
			return nil
		},
		func() error {
			// Not timed as create: how much later the cluster is usable.
			sa, err := defaultServiceAccountAfter(ctx, p, name, created)
			phases = append(phases, sa)
			return err
		},
		func() error { return p.Stop(ctx, name) },
		func() error { return p.Start(ctx, name, clusterWait) },
		func() error { return p.Delete(ctx, name) },
	}
	stepNames := []string{"create", "default ServiceAccount", "stop", "start", "delete"}
	for i, step := range steps {
		start := time.Now()
		if err := step(); err != nil {
			_ = p.Delete(ctx, name)
			return nil, nil, fmt.Errorf("%s: %w", stepNames[i], err)
		}
		if i == 1 {
			continue
		}
		took = append(took, time.Since(start))
		if i == 0 {
			events, err := supervisor.Startup(clusterdir.For(p.Home, name))
			if err == nil {
				phases, err = createPhases(events, start, created)
			}
			if err != nil {
				return nil, nil, fmt.Errorf("create: %w", err)
			}
		}
	}
	return took, phases, nil
}

// defaultServiceAccountAfter waits for the default namespace's
// ServiceAccount, which pods need, and returns how long after since it
// appeared.
func defaultServiceAccountAfter(ctx context.Context, p *cluster.Provider, name string, since time.Time) (time.Duration, error) {
	client, err := p.Client(name)
	if err != nil {
		return 0, err
	}
	err = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, clusterWait, true, func(ctx context.Context) (bool, error) {
		_, err := client.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	return time.Since(since), err
}

func printLifecycleRow(w io.Writer, label string, took []time.Duration) {
	fmt.Fprintf(w, "%-8s", label)
	for _, d := range took {
		fmt.Fprintf(w, "%9.2fs", d.Seconds())
	}
	fmt.Fprintln(w)
}

// medians is the median of each column of rows.
func medians(rows [][]time.Duration) []time.Duration {
	if len(rows) == 0 {
		return nil
	}
	out := make([]time.Duration, len(rows[0]))
	for col := range out {
		var column []time.Duration
		for _, row := range rows {
			column = append(column, row[col])
		}
		out[col] = median(column)
	}
	return out
}

// median is the middle value of ds (the upper one of an even count).
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
