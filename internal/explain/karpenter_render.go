package explain

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// printKarpenterPod writes Karpenter's view of a Pending pod, after the
// scheduler's explanation.
func printKarpenterPod(w io.Writer, k *KarpenterPod) error {
	fmt.Fprintln(w)
	if k.Event == nil {
		_, err := fmt.Fprintf(w, "Karpenter: %s.\n", k.Note)
		return err
	}
	fmt.Fprintln(w, "Karpenter's newest event on the pod:")
	fmt.Fprintf(w, "  %s\n", eventLine(*k.Event))
	if k.Event.Reason == "FailedScheduling" {
		// Its recorder drops a pod's FailedScheduling for 5 minutes after one.
		fmt.Fprintln(w, "  (Karpenter writes a pod's FailedScheduling at most once in 5 minutes: a newer reason may not show yet)")
	}
	if k.NodeClaim != nil {
		fmt.Fprintln(w)
		return printClaim(w, k.NodeClaim)
	}
	return nil
}

func eventLine(ev Event) string {
	times := ""
	if ev.Count > 1 {
		times = fmt.Sprintf(" (×%d)", ev.Count)
	}
	return fmt.Sprintf("%s  %s%s  %s", clock(ev.Time), ev.Reason, times, ev.Message)
}

// printClaim writes a NodeClaim and its conditions.
func printClaim(w io.Writer, c *NodeClaim) error {
	if c.Missing {
		_, err := fmt.Fprintf(w, "NodeClaim %s no longer exists.\n", c.Name)
		return err
	}
	var about []string
	if c.NodePool != "" {
		about = append(about, "NodePool "+c.NodePool)
	}
	if c.InstanceType != "" {
		about = append(about, "instance type "+c.InstanceType)
	}
	if c.Node != "" {
		about = append(about, "node "+c.Node)
	} else {
		about = append(about, "no node yet")
	}
	fmt.Fprintf(w, "NodeClaim %s (%s)", c.Name, strings.Join(about, ", "))
	if c.Deleting != nil {
		fmt.Fprintf(w, ", deleted at %s", clock(*c.Deleting))
	}
	fmt.Fprintln(w, ":")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  CONDITION\tSTATUS\tSINCE\tREASON")
	shown := map[string]bool{}
	for _, c := range c.Conditions {
		shown[c.Type] = true
		why := c.Reason
		if c.Message != "" && c.Message != c.Reason {
			why = strings.TrimPrefix(why+": "+c.Message, ": ")
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", c.Type, c.Status, clock(c.Since), why)
	}
	// A condition Karpenter has not set yet is a step not reached.
	for _, t := range launchOrder {
		if !shown[t] {
			fmt.Fprintf(tw, "  %s\t-\t-\tnot set yet\n", t)
		}
	}
	return tw.Flush()
}

// PrintNodeExplanation writes what explain node found, for a person.
func PrintNodeExplanation(w io.Writer, x *NodeExplanation) error {
	if x.ManagedBy == "" {
		fmt.Fprintf(w, "Node %s: %s.\n", x.Name, x.Note)
		return printBasics(w, x)
	}
	fmt.Fprintf(w, "Node %s: managed by Karpenter, NodeClaim %s of NodePool %s\n", x.Name, x.NodeClaim.Name, x.NodePool.Name)
	if x.InstanceType != "" {
		fmt.Fprintf(w, "Instance type %s", x.InstanceType)
		var offering []string
		if x.CapacityType != "" {
			offering = append(offering, x.CapacityType)
		}
		if x.Zone != "" {
			offering = append(offering, "zone "+x.Zone)
		}
		if len(offering) > 0 {
			fmt.Fprintf(w, " (%s)", strings.Join(offering, ", "))
		}
		if x.Price != "" {
			fmt.Fprintf(w, ", $%s/hour (the catalog's price, not a bill)", x.Price)
		}
		fmt.Fprintln(w)
	}
	if err := printBasics(w, x); err != nil {
		return err
	}
	printPool(w, x.NodePool)
	c := x.Consolidation
	status := c.Consolidatable
	switch {
	case status == "":
		status = "not set"
	case c.Since != nil:
		status += " since " + clock(*c.Since)
	}
	fmt.Fprintf(w, "Consolidatable: %s; %s\n", status, c.Note)
	if len(x.Disrupting) == 0 {
		fmt.Fprintln(w, "Being disrupted: no")
	} else {
		fmt.Fprintf(w, "Being disrupted: %s\n", strings.Join(x.Disrupting, "; "))
	}
	if len(x.DoNotDisrupt) > 0 {
		fmt.Fprintf(w, "Pods annotated karpenter.sh/do-not-disrupt: %s\n", strings.Join(x.DoNotDisrupt, ", "))
	}
	fmt.Fprintln(w)
	if err := printClaim(w, x.NodeClaim); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if len(x.Events) == 0 {
		_, err := fmt.Fprintln(w, "Karpenter has written no events about the node or its NodeClaim, nor DisruptionBlocked on its NodePool (the API server keeps events for an hour).")
		return err
	}
	fmt.Fprintln(w, "Karpenter's newest event of each reason, on the node, its NodeClaim and its NodePool:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  TIME\tON\tREASON\tMESSAGE")
	blocked := false
	for _, ev := range x.Events {
		reason := ev.Reason
		if ev.Count > 1 {
			reason += fmt.Sprintf(" (×%d)", ev.Count)
		}
		blocked = blocked || ev.Reason == "DisruptionBlocked"
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", clock(ev.Time), ev.On, reason, ev.Message)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if blocked {
		// Its recorder keys DisruptionBlocked by object, not by message.
		_, err := fmt.Fprintln(w, "  (Karpenter writes DisruptionBlocked at most once in 2 minutes per object, whatever the reason: a newer one may not show yet)")
		return err
	}
	return nil
}

// printBasics writes what any node has: readiness, pods, age, taints.
func printBasics(w io.Writer, x *NodeExplanation) error {
	pods := "pods"
	if x.Pods == 1 {
		pods = "pod"
	}
	fmt.Fprintf(w, "Ready %s, %d %s, created %s", x.Ready, x.Pods, pods, x.Created.Local().Format(time.DateTime))
	if x.Unschedulable {
		fmt.Fprint(w, ", unschedulable (cordoned)")
	}
	if x.Deleting != nil {
		fmt.Fprintf(w, ", deleted at %s", clock(*x.Deleting))
	}
	if x.ProviderID != "" {
		fmt.Fprintf(w, ", providerID %s", x.ProviderID)
	}
	fmt.Fprintln(w)
	if len(x.Taints) > 0 {
		fmt.Fprintf(w, "Taints: %s\n", strings.Join(x.Taints, ", "))
	}
	return nil
}

func printPool(w io.Writer, p *NodePoolSummary) {
	if p.Missing {
		fmt.Fprintf(w, "NodePool %s: gone\n", p.Name)
		return
	}
	fmt.Fprintf(w, "NodePool %s: consolidationPolicy %s, consolidateAfter %s", p.Name, p.ConsolidationPolicy, p.ConsolidateAfter)
	if len(p.Budgets) > 0 {
		fmt.Fprintf(w, ", budgets: %s", strings.Join(p.Budgets, "; "))
	}
	if len(p.Limits) > 0 {
		var limits []string
		for _, r := range slices.Sorted(maps.Keys(p.Limits)) {
			limits = append(limits, r+" "+p.Limits[r])
		}
		fmt.Fprintf(w, ", limits: %s", strings.Join(limits, ", "))
	}
	fmt.Fprintln(w)
}
