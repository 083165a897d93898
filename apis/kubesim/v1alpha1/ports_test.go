package v1alpha1

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// A cluster.yaml of format 3 or older keeps ports as an object of fields:
// it is read into the list, as the components name them now.
func TestPortsReadsTheFormerObject(t *testing.T) {
	var status ClusterStatus
	old := `{"ports": {"apiServer": 6443, "etcd": 2379, "etcdPeer": 2380, "dpdbWebhook": 9443, "schedulerExplain": 10259}}`
	dec := json.NewDecoder(strings.NewReader(old))
	dec.DisallowUnknownFields() // as kubesim reads cluster.yaml
	if err := dec.Decode(&status); err != nil {
		t.Fatal(err)
	}
	want := Ports{
		{Component: "kube-apiserver", Port: 6443}, {Component: "etcd", Port: 2379}, {Component: "etcd", Name: "peer", Port: 2380},
		{Component: "dpdb-controller", Port: 9443}, {Component: "kube-scheduler", Name: "explain", Port: 10259},
	}
	if !reflect.DeepEqual(status.Ports, want) {
		t.Errorf("ports %+v, want %+v", status.Ports, want)
	}
	if status.Ports.Get("usage-metrics", "") != 0 {
		t.Error("a port the old cluster lacks is not 0")
	}
	data, err := json.Marshal(status.Ports)
	if err != nil {
		t.Fatal(err)
	}
	var again Ports
	if err := json.Unmarshal(data, &again); err != nil || !reflect.DeepEqual(again, want) {
		t.Errorf("written and read again: %s → %+v, %v", data, again, err)
	}
	again.Set("etcd", "peer", 1)
	again.Set("usage-metrics", "", 2)
	if again.Get("etcd", "peer") != 1 || again.Get("usage-metrics", "") != 2 || len(again) != 6 {
		t.Errorf("after Set: %+v", again)
	}
}
