// Package snapshot is the file `kubesim snapshot export` writes and
// `create cluster --from` reads: plain multi-document YAML, one Kubernetes
// object per document in the order they are to be created, after comment
// lines of which one is the header (`# kubesim.io/snapshot: {JSON}`). kubectl
// apply -f reads it as it is.
package snapshot

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Format is the version of the file format this package writes and reads.
const Format = 1

// HeaderPrefix starts the comment line holding the header's JSON.
const HeaderPrefix = "# kubesim.io/snapshot: "

// SourceUIDAnnotation holds an object's uid in the source cluster, so a
// clone can point owner references and volume claims at the objects it
// made in their place.
const SourceUIDAnnotation = "kubesim.io/source-uid"

// Header says where a snapshot came from and what it holds.
type Header struct {
	Format int `json:"format"`
	// Kubernetes is the source API server's version, such as v1.36.3.
	Kubernetes string `json:"kubernetes"`
	// Source names the context or cluster it was read from.
	Source   string    `json:"source"`
	Exported time.Time `json:"exported"`
	// Counts are the objects written, by kind.
	Counts map[string]int `json:"counts"`
	// Skipped are the kinds (or resource.group of custom ones) not read,
	// each with why: "never read", "forbidden", ….
	Skipped map[string]string `json:"skipped,omitempty"`
}

// Write writes the header and the objects, in the order given. Notes are
// extra comment lines for people (what the export changed, and why).
func Write(w io.Writer, h Header, objects []*unstructured.Unstructured, notes ...string) error {
	h.Format = Format
	h.Exported = h.Exported.UTC().Truncate(time.Second)
	if h.Counts == nil {
		h.Counts = map[string]int{}
	}
	header, err := json.Marshal(h)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# A kubesim snapshot of %s's shape: `kubesim create cluster --from FILE` clones it.\n", h.Source)
	for _, n := range notes {
		fmt.Fprintf(bw, "# %s\n", n)
	}
	fmt.Fprintf(bw, "%s%s\n", HeaderPrefix, header)
	for _, obj := range objects {
		data, err := yaml.Marshal(obj.Object)
		if err != nil {
			return fmt.Errorf("%s %s: %w", obj.GetKind(), Name(obj), err)
		}
		bw.WriteString("---\n")
		bw.Write(data)
	}
	return bw.Flush()
}

// ErrNotASnapshot is returned by Read for a file without kubesim's header.
var ErrNotASnapshot = errors.New("not a kubesim snapshot (no `" + strings.TrimSpace(HeaderPrefix) + "` header line); make one with: kubesim snapshot export --context CTX --path FILE")

// Read reads a snapshot: its header and its objects in file order.
func Read(r io.Reader) (Header, []*unstructured.Unstructured, error) {
	var h Header
	data, err := io.ReadAll(r)
	if err != nil {
		return h, nil, err
	}
	found := false
	for line := range bytes.Lines(data) {
		if !bytes.HasPrefix(line, []byte("#")) {
			break // the header is among the comments the file starts with
		}
		if rest, ok := bytes.CutPrefix(line, []byte(HeaderPrefix)); ok {
			if err := json.Unmarshal(rest, &h); err != nil {
				return h, nil, fmt.Errorf("its %s line does not parse: %v", strings.TrimSpace(HeaderPrefix), err)
			}
			found = true
			break
		}
	}
	if !found {
		return h, nil, ErrNotASnapshot
	}
	if h.Format > Format {
		return h, nil, fmt.Errorf("written in snapshot format %d, newer than this kubesim's (%d); use a newer kubesim", h.Format, Format)
	}
	var docs [][]byte
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for i := 1; ; i++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return h, nil, fmt.Errorf("document %d: %w", i, err)
		}
		docs = append(docs, doc)
	}
	parsed, errs := parseDocuments(docs)
	var objects []*unstructured.Unstructured
	for i, obj := range parsed {
		if errs[i] != nil {
			return h, nil, fmt.Errorf("document %d: %w", i+1, errs[i])
		}
		if obj != nil {
			objects = append(objects, obj)
		}
	}
	return h, objects, nil
}

// parseDocuments decodes docs on every CPU at once: decoding YAML is most
// of a clone's first seconds (20,000 pods are 30 MB of it), before any
// cluster is made. A document of comments only is nil.
func parseDocuments(docs [][]byte) ([]*unstructured.Unstructured, []error) {
	objects, errs := make([]*unstructured.Unstructured, len(docs)), make([]error, len(docs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(docs)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(docs); i = int(next.Add(1) - 1) {
				objects[i], errs[i] = parseDocument(docs[i])
			}
		})
	}
	wg.Wait()
	return objects, errs
}

func parseDocument(doc []byte) (*unstructured.Unstructured, error) {
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(doc, &obj.Object); err != nil {
		return nil, fmt.Errorf("not valid YAML: %s", strings.Join(strings.Fields(err.Error()), " "))
	}
	if len(obj.Object) == 0 {
		return nil, nil // comments only, or empty
	}
	if obj.GetAPIVersion() == "" || obj.GetKind() == "" || obj.GetName() == "" {
		return nil, errors.New("an object needs apiVersion, kind and metadata.name")
	}
	return obj, nil
}

// CheckVersion refuses a snapshot of a Kubernetes minor version newer than
// ours (kubesim's), whose objects may have fields our API server drops.
func CheckVersion(h Header, ours string) error {
	theirs, err := utilversion.ParseGeneric(h.Kubernetes)
	if err != nil {
		return fmt.Errorf("its header's kubernetes %q is not a version such as v1.36.3", h.Kubernetes)
	}
	mine, err := utilversion.ParseGeneric(ours)
	if err != nil {
		return nil // a build without a stamped version cannot tell
	}
	if theirs.Major() > mine.Major() || theirs.Major() == mine.Major() && theirs.Minor() > mine.Minor() {
		return fmt.Errorf("exported from Kubernetes %s, newer than the clone's %s: give --kubernetes %d.%d or later if this kubesim offers it (kubesim version lists them), else clone it with a kubesim that does", h.Kubernetes, ours, theirs.Major(), theirs.Minor())
	}
	return nil
}

// Name is namespace/name of a namespaced object, else its name.
func Name(obj *unstructured.Unstructured) string {
	if ns := obj.GetNamespace(); ns != "" {
		return ns + "/" + obj.GetName()
	}
	return obj.GetName()
}

// Summary is "3 Namespace, 120 Pod, …" in a stable order.
func Summary(counts map[string]int) string {
	var parts []string
	for _, kind := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%d %s", counts[kind], kind))
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}
