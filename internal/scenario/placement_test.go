package scenario

import (
	"strings"
	"testing"
)

func TestPlacementGroupsByZoneAndMarksPendingAndEvicted(t *testing.T) {
	pl := testView().placement("")
	if pl.Key != zoneKey || len(pl.Domains) != 3 || len(pl.Pending) != 1 || len(pl.Evicted) != 1 {
		t.Fatalf("placement %+v", pl)
	}
	table := pl.Table()
	for _, want := range []string{"topology.kubernetes.io/zone=a", "n1               web×2", "(pending)        web×1", "n4               -"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}
