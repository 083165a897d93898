package result

import (
	"testing"
	"time"
)

func TestRefusalText(t *testing.T) {
	for _, tc := range []struct {
		r    Refusal
		want string
	}{
		{Refusal{Pod: "ns/a", PDB: "web", For: 1450 * time.Millisecond, Evicted: true}, "ns/a refused by PDB web for 1.4s, then evicted"},
		{Refusal{Pod: "ns/a", PDB: "a,b", For: time.Minute}, "ns/a refused by PDB a,b for 60.0s, still refused at the end"},
		// Tried once (expect: blocked): no duration to speak of.
		{Refusal{Pod: "ns/a", PDB: "web"}, "ns/a refused by PDB web, still refused at the end"},
		// Refused by something other than a PDB (a webhook): its words.
		{Refusal{Pod: "ns/a", For: time.Second, Message: "leader\n elsewhere"}, "ns/a refused by no PDB (leader elsewhere) for 1.0s, still refused at the end"},
	} {
		if got := tc.r.Text(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}
