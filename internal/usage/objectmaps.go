package usage

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/kubesim/kubesim/internal/kwokcel"
)

// objectMaps keeps the maps usage expressions see of pods and nodes, one
// per object version, with only the fields the expressions read. Every HPA
// sync asks for the same pods again, and making a pod's map (a conversion
// by reflection) costs more than the expression read over it. The maps are
// shared: nothing writes to them once made. A nil *objectMaps keeps
// nothing, and makes whole maps.
type objectMaps struct {
	mu      sync.Mutex
	entries map[types.UID]objectMapEntry
}

type objectMapEntry struct {
	version string
	fields  *kwokcel.Fields
	m       map[string]any
}

func newObjectMaps() *objectMaps {
	return &objectMaps{entries: map[types.UID]objectMapEntry{}}
}

// of is obj's map kept to fields (nil: whole), made anew when obj or
// fields have changed since it was last made.
func (c *objectMaps) of(obj interface {
	runtime.Object
	metav1.Object
}, kind string, fields *kwokcel.Fields) map[string]any {
	if c == nil {
		return objectMap(obj, kind)
	}
	uid, version := obj.GetUID(), obj.GetResourceVersion()
	c.mu.Lock()
	e, ok := c.entries[uid]
	c.mu.Unlock()
	if ok && e.version == version && e.fields == fields {
		return e.m
	}
	m := objectMap(obj, kind)
	if fields != nil {
		m = fields.Keep(m).(map[string]any)
	}
	c.mu.Lock()
	c.entries[uid] = objectMapEntry{version: version, fields: fields, m: m}
	c.mu.Unlock()
	return m
}

// forget drops the map of a deleted object.
func (c *objectMaps) forget(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if o, ok := obj.(metav1.Object); ok {
		c.mu.Lock()
		delete(c.entries, o.GetUID())
		c.mu.Unlock()
	}
}
