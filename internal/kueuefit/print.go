package kueuefit

import (
	"fmt"
	"io"

	"github.com/kubesim/kubesim/internal/explain"
)

// Print writes the answer as the CLI shows it: the verdict in a line,
// then explain's account of the Workload.
func Print(w io.Writer, a *Answer, cluster string) error {
	x := a.Workload
	switch a.Verdict {
	case Admitted:
		fmt.Fprintf(w, "Job %s would be admitted now to ClusterQueue %s.\n", a.Job, x.ClusterQueue)
	case QuotaReserved:
		fmt.Fprintf(w, "Job %s would have quota reserved in ClusterQueue %s, then wait for its admission checks.\n", a.Job, x.ClusterQueue)
	case Pending:
		fmt.Fprintf(w, "Job %s would wait in ClusterQueue %s: %s\n", a.Job, orUnknown(x.ClusterQueue), orUnknown(a.Why))
	case Preempts:
		fmt.Fprintf(w, "Job %s would be admitted to ClusterQueue %s once Kueue has preempted %d workload(s), listed below.\n", a.Job, orUnknown(x.ClusterQueue), len(a.Preempted))
	}
	fmt.Fprintf(w, "Kueue answered in a copy of cluster %q, since deleted: nothing was submitted to the cluster.\n\n", cluster)
	return explain.PrintWorkloadExplanation(w, x)
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}
