package usage

import "github.com/kubesim/kubesim/internal/kwokcel"

// objectFields are the fields of pods and nodes the model's expressions
// read: the maps kept for expressions hold these alone (a pod's labels and
// creation time rather than its whole spec and status). It only grows as
// usages are declared (more fields read the same), each time as a new
// value, which tells the kept maps to be made anew.
type objectFields struct{ pod, node *kwokcel.Fields }

func newObjectFields() *objectFields {
	return &objectFields{pod: &kwokcel.Fields{}, node: &kwokcel.Fields{}}
}

// with is f and what d's expressions read; f itself if they read nothing
// more.
func (f *objectFields) with(d *declared) *objectFields {
	next := &objectFields{pod: f.pod.Clone(), node: f.node.Clone()}
	for _, u := range d.usages {
		for _, v := range u.values {
			if v.program == nil {
				continue
			}
			next.pod.Merge(v.program.Fields("pod"))
			// A container's map is the one in its pod's, found by name.
			if c := v.program.Fields("container"); c != nil {
				next.pod.Merge(c, "spec", "containers")
				next.pod.Add("spec", "containers", "name")
			}
			next.node.Merge(v.program.Fields("node"))
		}
	}
	if next.pod.Equal(f.pod) && next.node.Equal(f.node) {
		return f
	}
	return next
}
