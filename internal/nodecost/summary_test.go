package nodecost

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/clusterdir"
)

var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func up(uid, pool string, price float64, at time.Duration) Entry {
	return Entry{Event: Up, At: t0.Add(at), Node: "kwok-" + uid, UID: types.UID(uid), NodePool: pool, PricePerHour: price}
}

func down(uid, pool string, at time.Duration) Entry {
	return Entry{Event: Down, At: t0.Add(at), Node: "kwok-" + uid, UID: types.UID(uid), NodePool: pool}
}

func TestSummarize(t *testing.T) {
	h := time.Hour
	now := 4 * h // after t0
	for _, tc := range []struct {
		name    string
		entries []Entry
		want    []PoolCost
	}{
		{"no ledger", nil, []PoolCost{}},
		{"a node still there costs until now",
			[]Entry{up("a", "default", 0.5, 2*h)},
			[]PoolCost{{NodePool: "default", Nodes: 1, Launched: 1, NodeHours: 2, Cost: 1, CostPerHour: 0.5}}},
		{"a node gone costs until it went",
			[]Entry{up("a", "default", 0.2, h), down("a", "default", h+30*time.Minute)},
			[]PoolCost{{NodePool: "default", Launched: 1, NodeHours: 0.5, Cost: 0.1}}},
		{"each node at its own price",
			[]Entry{up("a", "default", 1, 0), up("b", "default", 0.25, 2*h), down("a", "default", h)},
			[]PoolCost{{NodePool: "default", Nodes: 1, Launched: 2, NodeHours: 3, Cost: 1 + 0.5, CostPerHour: 0.25}}},
		{"pools apart, sorted by name",
			[]Entry{up("a", "spot", 0.1, 0), up("b", "on-demand", 1, 3*h)},
			[]PoolCost{
				{NodePool: "on-demand", Nodes: 1, Launched: 1, NodeHours: 1, Cost: 1, CostPerHour: 1},
				{NodePool: "spot", Nodes: 1, Launched: 1, NodeHours: 4, Cost: 0.4, CostPerHour: 0.1},
			}},
		{"a restart's second Up and Down count once",
			[]Entry{up("a", "default", 1, 0), up("a", "default", 1, 0), down("a", "default", h), down("a", "default", 2*h)},
			[]PoolCost{{NodePool: "default", Launched: 1, NodeHours: 1, Cost: 1}}},
		{"a Down whose Up a crash cut short is left out",
			[]Entry{down("a", "default", h), up("b", "default", 1, 3*h)},
			[]PoolCost{{NodePool: "default", Nodes: 1, Launched: 1, NodeHours: 1, Cost: 1, CostPerHour: 1}}},
		{"a name used again is another node",
			[]Entry{up("a", "default", 1, 0), down("a", "default", h), {Event: Up, At: t0.Add(3 * h), Node: "kwok-a", UID: "a2", NodePool: "default", PricePerHour: 1}},
			[]PoolCost{{NodePool: "default", Nodes: 1, Launched: 2, NodeHours: 2, Cost: 2, CostPerHour: 1}}},
		{"never negative",
			[]Entry{up("a", "default", 1, h), down("a", "default", h-time.Second), up("b", "default", 1, 5*h)},
			[]PoolCost{{NodePool: "default", Nodes: 1, Launched: 2, CostPerHour: 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Summarize(tc.entries, t0.Add(now))
			if !equalCosts(got, tc.want) {
				t.Errorf("Summarize =\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}

func TestTotal(t *testing.T) {
	got := Total([]PoolCost{
		{NodePool: "a", Nodes: 1, Launched: 3, NodeHours: 2, Cost: 1, CostPerHour: 0.5},
		{NodePool: "b", Nodes: 2, Launched: 2, NodeHours: 1.5, Cost: 0.25, CostPerHour: 0.2},
	})
	want := PoolCost{Nodes: 3, Launched: 5, NodeHours: 3.5, Cost: 1.25, CostPerHour: 0.7}
	if !equalCosts([]PoolCost{got}, []PoolCost{want}) {
		t.Errorf("Total = %+v, want %+v", got, want)
	}
}

// equalCosts compares costs to within float rounding.
func equalCosts(a, b []PoolCost) bool {
	if len(a) != len(b) {
		return false
	}
	near := func(x, y float64) bool { return math.Abs(x-y) < 1e-9 }
	for i := range a {
		x, y := a[i], b[i]
		if x.NodePool != y.NodePool || x.Nodes != y.Nodes || x.Launched != y.Launched ||
			!near(x.NodeHours, y.NodeHours) || !near(x.Cost, y.Cost) || !near(x.CostPerHour, y.CostPerHour) {
			return false
		}
	}
	return true
}

func TestClusterReport(t *testing.T) {
	home := t.TempDir()
	save := func(name string, autoscaled bool) clusterdir.Dir {
		d := clusterdir.For(home, name)
		if err := os.MkdirAll(d.Path, 0o700); err != nil {
			t.Fatal(err)
		}
		c := &v1alpha1.Cluster{Name: name, Status: &v1alpha1.ClusterStatus{}}
		if autoscaled {
			c.Autoscaler.Karpenter = &v1alpha1.Karpenter{}
		}
		if err := d.Save(c); err != nil {
			t.Fatal(err)
		}
		return d
	}
	save("static", false)
	if _, err := ClusterReport(home, "static", t0); err == nil || !strings.HasSuffix(err.Error(), ": create the cluster with --autoscaler karpenter") {
		t.Errorf("a cluster without an autoscaler: %v, want the fix named", err)
	}

	d := save("elastic", true)
	r, err := ClusterReport(home, "elastic", t0)
	if err != nil || len(r.NodePools) != 0 || r.Total != (PoolCost{}) {
		t.Errorf("no ledger yet: %+v, %v; want nothing, no error", r, err)
	}
	l, err := openLedger(d.NodeLedger())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []Entry{up("a", "default", 2, 0), down("a", "default", 90*time.Minute)} {
		if err := l.append(e); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	r, err = ClusterReport(home, "elastic", t0.Add(2*time.Hour))
	want := []PoolCost{{NodePool: "default", Launched: 1, NodeHours: 1.5, Cost: 3}}
	if err != nil || !equalCosts(r.NodePools, want) || !equalCosts([]PoolCost{r.Total}, []PoolCost{{Launched: 1, NodeHours: 1.5, Cost: 3}}) {
		t.Errorf("from the ledger: %+v, %v; want %+v", r, err, want)
	}
	if _, err := ClusterReport(home, "nope", t0); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("no such cluster: %v", err)
	}
}

func TestLedgerSurvivesACutLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nodes.jsonl")
	l, err := openLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	first := up("a", "default", 0.17, 0)
	if err := l.append(first); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("ledger: %v, %v; want mode 0600", info, err)
	}
	// A crash mid-write leaves half a line.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"event":"up","at":"2030-01-01T00:00:00Z","node":"kwok-b`)
	f.Close()

	l, err = openLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	second := down("a", "default", time.Hour)
	if err := l.append(second); err != nil {
		t.Fatal(err)
	}
	l.Close()
	got, err := ReadLedger(path)
	if err != nil || !reflect.DeepEqual(got, []Entry{first, second}) {
		t.Errorf("ReadLedger = %+v, %v; want the two whole entries", got, err)
	}
}
