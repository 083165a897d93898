package result

import (
	"fmt"
	"strings"
	"time"
)

// Drain is what a drain step did: the nodes its surge added, each wave,
// and the pods left Pending when it ended.
type Drain struct {
	Surge *Surge `json:"surge,omitempty"`
	Waves []Wave `json:"waves"`
	// Planned is how many waves the drain had in view; fewer ran if it
	// stopped early (blocked, or out of time).
	Planned int `json:"planned"`
	// Pending are the cluster's pods Pending when the drain ended, each
	// with the scheduler's reason.
	Pending []PendingPod `json:"pending,omitempty"`
}

// Surge is the nodes added to a node group before the first wave.
type Surge struct {
	NodeGroup string        `json:"nodeGroup"`
	Nodes     []string      `json:"nodes"`
	Duration  time.Duration `json:"duration"` // until they were Ready
}

// Wave is the nodes drained together, the evictions made from them and
// those refused, and its wall time: from the cordon to the replacements of
// its evicted pods Running elsewhere (or found unschedulable).
type Wave struct {
	Nodes    []string      `json:"nodes"`
	Evicted  []string      `json:"evicted"` // namespace/name
	Refusals []Refusal     `json:"refusals,omitempty"`
	Duration time.Duration `json:"duration"`
}

// Refusal is a pod whose eviction was refused: by which budgets (the PDBs
// whose selector picks it), for how long (from the first refusal to the
// eviction, or to the drain's end if it never came), and the refusal's words.
type Refusal struct {
	Pod     string        `json:"pod"`
	PDB     string        `json:"pdb,omitempty"`
	For     time.Duration `json:"for"`
	Evicted bool          `json:"evicted"` // allowed in the end
	Message string        `json:"message,omitempty"`
}

// PendingPod is a pod left Pending, with the scheduler's reason (`kubesim
// explain`'s, else its PodScheduled condition's).
type PendingPod struct {
	Pod    string `json:"pod"`
	Reason string `json:"reason"`
}

// Text is the drain's result as lines of text, for the terminal and JUnit.
func (d *Drain) Text() string {
	var b strings.Builder
	if s := d.Surge; s != nil {
		fmt.Fprintf(&b, "surge: node group %s +%d (%s), Ready after %s\n", orUnnamed(s.NodeGroup), len(s.Nodes), strings.Join(s.Nodes, " "), Secs(s.Duration))
	}
	for i, w := range d.Waves {
		b.WriteString(w.Text(i+1, d.Planned))
	}
	if len(d.Pending) > 0 {
		fmt.Fprintf(&b, "left Pending: %d\n", len(d.Pending))
		for _, p := range d.Pending {
			fmt.Fprintf(&b, "  %s: %s\n", p.Pod, oneLine(p.Reason))
		}
	}
	return b.String()
}

// Text is a wave's line and one line per refusal under it.
func (w *Wave) Text(n, of int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "wave %d/%d: %s: %d evicted", n, of, strings.Join(w.Nodes, " "), len(w.Evicted))
	if len(w.Refusals) > 0 {
		fmt.Fprintf(&b, ", %d refused for a while", len(w.Refusals))
	}
	fmt.Fprintf(&b, ", %s\n", Secs(w.Duration))
	for _, r := range w.Refusals {
		fmt.Fprintf(&b, "  %s\n", r.Text())
	}
	return b.String()
}

// Text is a refusal in words: "default/web-1 refused by PDB web for 1.4s, then evicted".
func (r *Refusal) Text() string {
	by := "PDB " + r.PDB
	if r.PDB == "" {
		by = "no PDB (" + oneLine(r.Message) + ")"
	}
	end := "then evicted"
	if !r.Evicted {
		end = "still refused at the end"
	}
	if r.For == 0 { // tried once (expect: blocked)
		return fmt.Sprintf("%s refused by %s, %s", r.Pod, by, end)
	}
	return fmt.Sprintf("%s refused by %s for %s, %s", r.Pod, by, Secs(r.For), end)
}

// Secs is a duration as reports show it: seconds to a tenth.
func Secs(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }

func orUnnamed(group string) string {
	if group == "" {
		return "(unnamed)"
	}
	return group
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
