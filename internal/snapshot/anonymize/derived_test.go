package anonymize

import (
	"slices"
	"strings"
	"testing"
)

// One string derived two ways (a StatefulSet web-db's pod web-db-0, and
// the claim web-db-0 of StatefulSet db's template web) is mapped one way
// whatever the order of the objects, and counted.
func TestAmbiguousDerivation(t *testing.T) {
	const yaml = `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web-db, namespace: shop}
spec: {selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: shop}
spec:
  selector: {matchLabels: {app: db}}
  template: {metadata: {labels: {app: db}}}
  volumeClaimTemplates: [{metadata: {name: web}}]
---
apiVersion: v1
kind: Pod
metadata:
  name: web-db-0
  namespace: shop
  ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: web-db, uid: 00000000-0000-4000-8000-000000000001, controller: true}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: web-db-0, namespace: shop}
`
	names := func(reverse bool) ([]string, Summary) {
		objs := decode(t, strings.NewReader(yaml))
		if reverse {
			slices.Reverse(objs)
		}
		sum, err := New(testKey).Objects(objs)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, o := range objs {
			out = append(out, o.GetKind()+" "+o.GetName())
		}
		slices.Sort(out)
		return out, sum
	}
	forward, sum := names(false)
	backward, _ := names(true)
	if !slices.Equal(forward, backward) || sum.Ambiguous != 1 {
		t.Errorf("forward %v, backward %v, ambiguous %d", forward, backward, sum.Ambiguous)
	}
	if !strings.Contains(sum.String(), "1 names derived two ways") {
		t.Errorf("summary %q does not say so", sum.String())
	}
}

// A name that would not keep its shape is refused with the object named.
func TestShapeKept(t *testing.T) {
	objs := decode(t, strings.NewReader(`
apiVersion: v1
kind: Pod
metadata: {name: web-0, namespace: shop, labels: {"statefulset.kubernetes.io/pod-name": web-0}}
`))
	a := New(testKey)
	if _, err := a.Objects(objs); err != nil {
		t.Fatal(err)
	}
	// A Service named like a pod whose name is derived: w, then 60
	// characters of generated suffixes; w's token makes it 71 long.
	long := strings.Repeat("bbbbbbbbbb-", 5) + "bbbbb"
	objs = decode(t, strings.NewReader(`
apiVersion: v1
kind: Service
metadata: {name: w-`+long+`, namespace: shop}
---
apiVersion: v1
kind: Pod
metadata:
  name: w-`+long+`
  namespace: shop
  ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: w, uid: 00000000-0000-4000-8000-000000000001, controller: true}]
`))
	_, err := a.Objects(objs)
	if err == nil || !strings.Contains(err.Error(), "Service") || !strings.Contains(err.Error(), "DNS-1123 label") {
		t.Errorf("err = %v, want the Service named and the label limit", err)
	}
}
