package kubeletsim

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/kubesim/kubesim/internal/stage"
)

// A broken Stage is reported once per version of it: not once per object
// it meets, nor once per rebuild of the stages.

// reportedVersions are the versions of Stages already reported broken.
type reportedVersions struct {
	mu   sync.Mutex
	seen map[string]string // stage name → the version reported
}

// first reports whether this version of the named Stage is reported for
// the first time, and notes that it is.
func (r *reportedVersions) first(name, version string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if v, ok := r.seen[name]; ok && v == version {
		return false
	}
	if r.seen == nil {
		r.seen = map[string]string{}
	}
	r.seen[name] = version
	return true
}

// reportFaults tells of Stages whose jq expressions ran past their limit
// on obj, where they counted as no match or value: a log line and a
// StageFailed Warning Event on the Stage object (on obj, for a built-in
// stage), once per version of the Stage.
func (r *runner) reportFaults(obj runtime.Object, faults ...*stage.Fault) {
	for _, f := range faults {
		if f == nil || !r.faulted.first(f.Stage.Name, f.Stage.Revision) {
			continue
		}
		key, _ := cache.MetaNamespaceKeyFunc(obj)
		err := fmt.Errorf("%w; counted as no match or value (first for %s %s)", f, r.kind.name(), key)
		r.warn(obj, stageObject(f.Stage, obj), "StageFailed", err)
	}
}
