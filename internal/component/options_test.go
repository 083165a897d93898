package controlplane

import (
	"reflect"
	"testing"
	"time"
)

// Every typed command line renders to arguments that parse back to it.
func TestOptionsRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     Options
		parsed func() Options
	}{
		{"supervisor", &SupervisorOptions{Home: "/h", Name: "blue"}, func() Options { return &SupervisorOptions{} }},
		{"etcd", &EtcdOptions{DataDir: "/d", ClientURL: "https://127.0.0.1:1", PeerURL: "https://127.0.0.1:2",
			CertFile: "c", KeyFile: "k", TrustedCAFile: "ca"}, func() Options { return &EtcdOptions{} }},
		{"descheduler", &DeschedulerOptions{Kubeconfig: "kc", Policy: "p.yaml", Interval: 90 * time.Second},
			func() Options { o := DefaultDeschedulerOptions(); return &o }},
	} {
		args := Args(tc.in)
		out := tc.parsed()
		if err := ParseArgs(tc.name, out, args); err != nil {
			t.Fatalf("%s: parsing %v: %v", tc.name, args, err)
		}
		if !reflect.DeepEqual(out, tc.in) {
			t.Errorf("%s: %v parsed back to %+v, want %+v", tc.name, args, out, tc.in)
		}
	}
}

func TestParseArgsRefusesWhatItDoesNotKnow(t *testing.T) {
	var o SupervisorOptions
	if err := ParseArgs("supervisor", &o, []string{"--nmae=x"}); err == nil {
		t.Error("an unknown flag parsed")
	}
	if err := ParseArgs("supervisor", &o, []string{"--name=x", "stray"}); err == nil {
		t.Error("a stray argument parsed")
	}
}
