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

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/cluster"
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
	var rows [][]time.Duration
	for run := 1; run <= runs; run++ {
		took, err := lifecycleRun(ctx, p, fmt.Sprintf("bench-%d-%d", os.Getpid(), run))
		if err != nil {
			return err
		}
		rows = append(rows, took)
		printLifecycleRow(w, strconv.Itoa(run), took)
	}
	printLifecycleRow(w, "median", medians(rows))
	return nil
}

// lifecycleRun creates, stops, starts and deletes one cluster and returns
// how long each step took.
func lifecycleRun(ctx context.Context, p *cluster.Provider, name string) ([]time.Duration, error) {
	steps := []func() error{
		func() error {
			return p.Create(ctx, &v1alpha1.Cluster{Name: name}, cluster.CreateOptions{Wait: clusterWait})
		},
		func() error { return p.Stop(ctx, name) },
		func() error { return p.Start(ctx, name, clusterWait) },
		func() error { return p.Delete(ctx, name) },
	}
	var took []time.Duration
	for i, step := range steps {
		start := time.Now()
		if err := step(); err != nil {
			_ = p.Delete(ctx, name)
			return nil, fmt.Errorf("%s: %w", LifecycleSteps[i], err)
		}
		took = append(took, time.Since(start))
	}
	return took, nil
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
