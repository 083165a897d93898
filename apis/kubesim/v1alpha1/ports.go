package v1alpha1

import (
	"encoding/json"
	"slices"
)

// Ports are the loopback ports the cluster's components listen on, each
// named by its component and, for a component with several, a name of
// its own ("" for its main one). Each component declares its ports;
// kubesim chooses them at create, and gives one a cluster lacks at start.
type Ports []Port

// Port is one of a component's ports.
type Port struct {
	Component string `json:"component"`
	Name      string `json:"name,omitempty"`
	Port      int    `json:"port"`
}

// APIServerComponent is the API server's name among the components.
const APIServerComponent = "kube-apiserver"

// APIServer is the API server's port, which every client dials.
func (p Ports) APIServer() int { return p.Get(APIServerComponent, "") }

// Get is the component's port of that name, 0 if it has none.
func (p Ports) Get(component, name string) int {
	if i := p.index(component, name); i >= 0 {
		return p[i].Port
	}
	return 0
}

// Set gives the component's port of that name.
func (p *Ports) Set(component, name string, port int) {
	if i := p.index(component, name); i >= 0 {
		(*p)[i].Port = port
		return
	}
	*p = append(*p, Port{Component: component, Name: name, Port: port})
}

// Numbers are every port, in the list's order.
func (p Ports) Numbers() []int {
	var out []int
	for _, port := range p {
		out = append(out, port.Port)
	}
	return out
}

func (p Ports) index(component, name string) int {
	return slices.IndexFunc(p, func(port Port) bool { return port.Component == component && port.Name == name })
}

// legacyPorts is how kubesim wrote ports up to format 3: a field a
// component; read into the list, as the components name them now.
var legacyPorts = []struct{ field, component, name string }{
	{"apiServer", APIServerComponent, ""},
	{"etcd", "etcd", ""},
	{"etcdPeer", "etcd", "peer"},
	{"dpdbWebhook", "dpdb-controller", ""},
	{"schedulerExplain", "kube-scheduler", "explain"},
	{"usageMetrics", "usage-metrics", ""},
}

// UnmarshalJSON reads the list, or the object of fields older kubesims
// wrote, so that every cluster made before still starts.
func (p *Ports) UnmarshalJSON(data []byte) error {
	var list []Port
	if err := json.Unmarshal(data, &list); err == nil {
		*p = list
		return nil
	}
	var fields map[string]int
	if err := json.Unmarshal(data, &fields); err != nil {
		return err
	}
	*p = nil
	for _, l := range legacyPorts {
		if port := fields[l.field]; port != 0 {
			p.Set(l.component, l.name, port)
		}
	}
	return nil
}
