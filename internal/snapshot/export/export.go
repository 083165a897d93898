// Package export reads a live cluster's shape into snapshot objects, with
// get and list only: paged lists, no client-side throttle (the server's
// API Priority and Fairness is the limiter) but back-off when the server
// asks for it, no watch. A kind it may not list is skipped and named.
package export

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kubesim/kubesim/internal/snapshot"
	"github.com/kubesim/kubesim/internal/snapshot/anonymize"
)

// PageSize is how many objects one list call asks for.
const PageSize = 500

// Options say what to read and where to report.
type Options struct {
	// Config reaches the source; its QPS limit is lifted here.
	Config *rest.Config
	// Source names the source in the header (its context).
	Source string
	// Namespaces, if any, limit the namespaced kinds (and Namespaces, and
	// PVs bound to claims elsewhere) to these.
	Namespaces []string
	// Progress, if set and Terminal, gets a line per kind redrawn as its
	// pages come in.
	Progress io.Writer
	Terminal bool
}

// Result is a snapshot's content.
type Result struct {
	Header  snapshot.Header
	Objects []*unstructured.Unstructured
	// Carried are the workloads whose templates took their live pods'
	// resources (Kind namespace/name).
	Carried []string
	// Left are counts of objects left out on purpose, by why.
	Left map[string]int
}

// Anonymize rewrites the result through a: its objects, its source's
// name and the workloads its notes name.
func (r *Result) Anonymize(a *anonymize.Anonymizer) (anonymize.Summary, error) {
	summary, err := a.Objects(r.Objects)
	if err != nil {
		return summary, err
	}
	r.Header.Source = a.Name(r.Header.Source)
	for i, c := range r.Carried { // Kind namespace/name
		kind, ref, _ := strings.Cut(c, " ")
		ns, name, namespaced := strings.Cut(ref, "/")
		if namespaced {
			r.Carried[i] = kind + " " + a.Name(ns) + "/" + a.Name(name)
		} else {
			r.Carried[i] = kind + " " + a.Name(ref)
		}
	}
	return summary, nil
}

// Notes are the result's comment lines for the file.
func (r *Result) Notes() []string {
	var notes []string
	if len(r.Carried) > 0 {
		notes = append(notes, fmt.Sprintf("%d workloads' templates took their live pods' resources and containers: %v", len(r.Carried), r.Carried))
	}
	for _, why := range slices.Sorted(maps.Keys(r.Left)) {
		notes = append(notes, fmt.Sprintf("left out: %d %s", r.Left[why], why))
	}
	return notes
}

// Export reads the source. An error is one that leaves no snapshot worth
// having: the source unreachable, or no kind readable at all.
func Export(ctx context.Context, o Options) (*Result, error) {
	cfg := rest.CopyConfig(o.Config)
	cfg.QPS = -1 // no client-side limiter: the server's fairness decides
	cfg.UserAgent = "kubesim-snapshot-export"
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	ver, err := disco.ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("cannot reach the API server of %s: %s", o.Source, oneLine(err))
	}
	served, err := servedResources(disco)
	if err != nil {
		return nil, fmt.Errorf("cannot list the API resources of %s: %s", o.Source, oneLine(err))
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	r := &Result{
		Header: snapshot.Header{Format: snapshot.Format, Kubernetes: ver.GitVersion, Source: o.Source, Exported: time.Now(),
			Counts: map[string]int{}, Skipped: map[string]string{}},
		Left: map[string]int{},
	}
	for kind, why := range neverRead {
		r.Header.Skipped[kind] = why
	}
	namespaces := sets.New(o.Namespaces...)
	readable := 0
	for _, k := range kinds {
		if !served.Has(k.GroupVersionResource) {
			continue // not served by this source: nothing of it to copy
		}
		objs, err := listKind(ctx, client, k, o)
		switch {
		case apierrors.IsForbidden(err):
			r.Header.Skipped[k.Kind] = "forbidden"
			continue
		case err != nil:
			return nil, fmt.Errorf("listing %s of %s: %s", k.Resource, o.Source, oneLine(err))
		}
		readable++
		for _, obj := range objs {
			if drop, why := leftOut(obj, namespaces); drop {
				if why != "" {
					r.Left[why]++
				}
				continue
			}
			strip(obj)
			r.Objects = append(r.Objects, obj)
			r.Header.Counts[k.Kind]++
		}
	}
	if readable == 0 {
		return nil, fmt.Errorf("%s lets this user list none of the kinds a snapshot reads; grant deploy/snapshot-reader-clusterrole.yaml", o.Source)
	}
	r.Objects = dropOrphanRevisions(r)
	r.Carried = carryLiveResources(r.Objects)
	return r, nil
}

// leftOut says whether a live object is not copied, and why if that is
// worth a note.
func leftOut(obj *unstructured.Unstructured, namespaces sets.Set[string]) (bool, string) {
	if namespaces.Len() > 0 {
		ns := obj.GetNamespace()
		switch obj.GetKind() {
		case "Namespace":
			ns = obj.GetName()
		case "PersistentVolume":
			if ref, ok, _ := unstructured.NestedString(obj.Object, "spec", "claimRef", "namespace"); ok {
				ns = ref
			}
		}
		if ns != "" && !namespaces.Has(ns) {
			return true, "" // not asked for
		}
	}
	switch obj.GetKind() {
	case "PriorityClass":
		if strings.HasPrefix(obj.GetName(), "system-") {
			return true, "" // every cluster has them
		}
	case "Pod":
		phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
		switch {
		case obj.GetDeletionTimestamp() != nil:
			return true, "pods being deleted"
		case phase == "Succeeded" || phase == "Failed":
			return true, "finished pods (Succeeded or Failed)"
		}
	case "Job":
		if finished(obj) {
			return true, "finished Jobs (a clone would run them again)"
		}
	}
	return false, ""
}

// finished reports whether a Job has its Complete or Failed condition.
func finished(job *unstructured.Unstructured) bool {
	conditions, _, _ := unstructured.NestedSlice(job.Object, "status", "conditions")
	for _, c := range conditions {
		c, _ := c.(map[string]any)
		if (c["type"] == "Complete" || c["type"] == "Failed") && c["status"] == "True" {
			return true
		}
	}
	return false
}

// dropOrphanRevisions keeps the ControllerRevisions of copied StatefulSets
// and DaemonSets only: the others (of Deployments' rollouts elsewhere,
// hand-made) mean nothing to a clone.
func dropOrphanRevisions(r *Result) []*unstructured.Unstructured {
	sets := map[string]bool{}
	for _, obj := range r.Objects {
		if obj.GetKind() == "StatefulSet" || obj.GetKind() == "DaemonSet" {
			sets[obj.GetAnnotations()[snapshot.SourceUIDAnnotation]] = true
		}
	}
	return slices.DeleteFunc(r.Objects, func(obj *unstructured.Unstructured) bool {
		if obj.GetKind() != "ControllerRevision" || sets[controllerUID(obj)] {
			return false
		}
		r.Header.Counts["ControllerRevision"]--
		if r.Header.Counts["ControllerRevision"] == 0 {
			delete(r.Header.Counts, "ControllerRevision")
		}
		return true
	})
}

// servedResources are the resources the source serves (a group it cannot
// describe just now counts as not served).
func servedResources(disco discovery.DiscoveryInterface) (sets.Set[schema.GroupVersionResource], error) {
	_, lists, err := disco.ServerGroupsAndResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, err
	}
	served := sets.New[schema.GroupVersionResource]()
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			continue
		}
		for _, res := range list.APIResources {
			served.Insert(gv.WithResource(res.Name))
		}
	}
	return served, nil
}

// listKind lists every object of a kind, a page at a time (in each of the
// namespaces asked for, if any).
func listKind(ctx context.Context, client dynamic.Interface, k kind, o Options) ([]*unstructured.Unstructured, error) {
	p := newProgress(o.Progress, o.Terminal, k.Kind)
	defer p.done()
	scopes := []string{metav1.NamespaceAll}
	if k.Namespaced && len(o.Namespaces) > 0 {
		scopes = o.Namespaces
	}
	var out []*unstructured.Unstructured
	for _, ns := range scopes {
		res := client.Resource(k.GroupVersionResource)
		var lister dynamic.ResourceInterface = res
		if k.Namespaced {
			lister = res.Namespace(ns)
		}
		opts := metav1.ListOptions{Limit: PageSize}
		for {
			list, err := withBackoff(ctx, func() (*unstructured.UnstructuredList, error) { return lister.List(ctx, opts) })
			if apierrors.IsResourceExpired(err) && opts.Continue != "" {
				// The continue token outlived compaction: start over
				// rather than mix two moments of the source.
				out, opts.Continue = out[:0], ""
				continue
			}
			if err != nil {
				return nil, err
			}
			for i := range list.Items {
				obj := &list.Items[i]
				obj.SetAPIVersion(k.GroupVersion().String())
				obj.SetKind(k.Kind)
				out = append(out, obj)
			}
			p.show(len(out))
			if opts.Continue = list.GetContinue(); opts.Continue == "" {
				break
			}
		}
	}
	return out, nil
}

// withBackoff calls list until it succeeds, or fails with something a
// retry would not mend: on 429 and 5xx it waits what the server asks
// (Retry-After) or, without that, 0.5 s doubling to 30 s, for at most
// 10 tries.
func withBackoff(ctx context.Context, list func() (*unstructured.UnstructuredList, error)) (*unstructured.UnstructuredList, error) {
	wait := 500 * time.Millisecond
	for try := 1; ; try++ {
		l, err := list()
		if err == nil || try == 10 || !retriable(err) {
			return l, err
		}
		delay := wait
		if seconds, ok := apierrors.SuggestsClientDelay(err); ok && seconds > 0 {
			delay = time.Duration(seconds) * time.Second
		}
		select {
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-time.After(delay):
		}
		wait = min(2*wait, 30*time.Second)
	}
}

func retriable(err error) bool {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		code := status.Status().Code
		return code == 429 || code >= 500
	}
	return apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err)
}
