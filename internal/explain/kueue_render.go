package explain

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
)

// PrintWorkloadExplanation writes what Kueue says of a Workload.
func PrintWorkloadExplanation(w io.Writer, x *WorkloadExplanation) error {
	fmt.Fprintf(w, "Workload %s/%s", x.Namespace, x.Name)
	if x.Owner != "" {
		fmt.Fprintf(w, " of %s", x.Owner)
	}
	fmt.Fprintf(w, ": LocalQueue %s", orNone(x.LocalQueue))
	if x.ClusterQueue != "" {
		fmt.Fprintf(w, " → ClusterQueue %s", x.ClusterQueue)
	}
	if x.Priority != nil {
		fmt.Fprintf(w, ", priority %d", *x.Priority)
		if x.PriorityClass != "" {
			fmt.Fprintf(w, " (%s)", x.PriorityClass)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%s", x.State)
	if x.Since != nil {
		fmt.Fprintf(w, " since %s", clock(*x.Since))
	}
	if x.Why != "" {
		fmt.Fprintf(w, ": %s", x.Why)
	}
	fmt.Fprintln(w)
	if x.PreemptedBy != "" {
		fmt.Fprintf(w, "Preempted to make room for Workload %s\n", x.PreemptedBy)
	}
	if len(x.Preempted) > 0 {
		fmt.Fprintf(w, "Kueue preempted %d workload(s) to make room for it:\n", len(x.Preempted))
		for _, v := range x.Preempted {
			fmt.Fprintf(w, "  %s/%s (%s, LocalQueue %s): %s\n", v.Namespace, v.Name, orNone(v.Owner), orNone(v.LocalQueue), v.Reason)
		}
	}
	if p := x.Position; p != nil {
		fmt.Fprintf(w, "Position (Kueue's visibility API): %s in ClusterQueue %s, %s in LocalQueue %s\n",
			ordinal(p.InClusterQueue), x.ClusterQueue, ordinal(p.InLocalQueue), x.LocalQueue)
	}
	if x.Requeues > 0 {
		fmt.Fprintf(w, "Requeued %d times", x.Requeues)
		if x.RequeueAt != nil {
			fmt.Fprintf(w, ", next try at %s", clock(*x.RequeueAt))
		}
		fmt.Fprintln(w)
	}
	for _, ps := range x.Admission {
		fmt.Fprintf(w, "Pod set %s", ps.Name)
		if ps.Count > 0 {
			fmt.Fprintf(w, " ×%d", ps.Count)
		}
		var parts []string
		for _, r := range slices.Sorted(maps.Keys(ps.Usage)) {
			part := r + " " + ps.Usage[r]
			if f := ps.Flavors[r]; f != "" {
				part += " of flavor " + f
			}
			parts = append(parts, part)
		}
		fmt.Fprintf(w, ": %s\n", strings.Join(parts, ", "))
	}
	if len(x.Conditions) > 0 {
		fmt.Fprintln(w, "\nKueue's conditions on the Workload:")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  TYPE\tSTATUS\tREASON\tSINCE\tMESSAGE")
		for _, c := range x.Conditions {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", c.Type, c.Status, c.Reason, clock(c.Since), c.Message)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	if len(x.Events) == 0 {
		_, err := fmt.Fprintln(w, "Kueue has written no events on the Workload or its Job (the API server keeps events for an hour).")
		return err
	}
	fmt.Fprintln(w, "Kueue's events on the Workload and its Job, oldest first:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  TIME\tON\tREASON\tMESSAGE")
	for _, ev := range x.Events {
		reason := ev.Reason
		if ev.Count > 1 {
			reason += fmt.Sprintf(" (×%d)", ev.Count)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", clock(ev.Time), ev.On, reason, ev.Message)
	}
	return tw.Flush()
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// ordinal is 1st, 2nd, 3rd, 4th … 11th, 12th, 13th, 21st.
func ordinal(n int32) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return fmt.Sprintf("%d%s", n, suffix)
}
