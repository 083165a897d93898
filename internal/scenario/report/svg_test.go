package report

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kubesim/kubesim/internal/scenario/result"
)

// The first twenty workloads' colours are clearly apart, each pair at
// least as far as Tableau's ten are from each other (CIEDE2000 ≥ 15), and
// no two of the first two hundred are the same.
func TestWorkloadColoursAreDistinct(t *testing.T) {
	for i := range 20 {
		for j := range i {
			a, b := colour(i), colour(j)
			if d := deltaE2000(hexLab(t, a), hexLab(t, b)); d < 15 {
				t.Errorf("workloads %d (%s) and %d (%s) look alike: CIEDE2000 %.1f", i, a, j, b, d)
			}
		}
	}
	seen := map[string]int{}
	for i := range 200 {
		c := colour(i)
		if j, ok := seen[c]; ok {
			t.Errorf("workloads %d and %d share %s", j, i, c)
		}
		seen[c] = i
	}
}

// hexLab is a "#rrggbb" colour in CIELAB (D65).
func hexLab(t *testing.T, hex string) [3]float64 {
	t.Helper()
	var rgb [3]float64
	if len(hex) != 7 || hex[0] != '#' {
		t.Fatalf("colour %q is not #rrggbb", hex)
	}
	for k := range rgb {
		v, err := strconv.ParseUint(hex[1+2*k:3+2*k], 16, 8)
		if err != nil {
			t.Fatalf("colour %q: %v", hex, err)
		}
		c := float64(v) / 255
		if c > 0.04045 {
			rgb[k] = math.Pow((c+0.055)/1.055, 2.4)
		} else {
			rgb[k] = c / 12.92
		}
	}
	r, g, b := rgb[0], rgb[1], rgb[2]
	f := func(v float64) float64 {
		if v > 216.0/24389 {
			return math.Cbrt(v)
		}
		return (24389.0/27*v + 16) / 116
	}
	fx := f((0.4124*r + 0.3576*g + 0.1805*b) / 0.95047)
	fy := f(0.2126*r + 0.7152*g + 0.0722*b)
	fz := f((0.0193*r + 0.1192*g + 0.9505*b) / 1.08883)
	return [3]float64{116*fy - 16, 500 * (fx - fy), 200 * (fy - fz)}
}

// deltaE2000 is the CIEDE2000 colour difference of two CIELAB colours.
func deltaE2000(c1, c2 [3]float64) float64 {
	rad, deg := math.Pi/180, 180/math.Pi
	L1, a1, b1, L2, a2, b2 := c1[0], c1[1], c1[2], c2[0], c2[1], c2[2]
	cb := (math.Hypot(a1, b1) + math.Hypot(a2, b2)) / 2
	g := 0.5 * (1 - math.Sqrt(math.Pow(cb, 7)/(math.Pow(cb, 7)+math.Pow(25, 7))))
	a1p, a2p := (1+g)*a1, (1+g)*a2
	c1p, c2p := math.Hypot(a1p, b1), math.Hypot(a2p, b2)
	hue := func(b, a float64) float64 { return math.Mod(math.Atan2(b, a)*deg+360, 360) }
	h1p, h2p := hue(b1, a1p), hue(b2, a2p)
	dLp, dCp, dhp := L2-L1, c2p-c1p, 0.0
	if c1p*c2p != 0 {
		dhp = h2p - h1p
		if dhp > 180 {
			dhp -= 360
		} else if dhp < -180 {
			dhp += 360
		}
	}
	dHp := 2 * math.Sqrt(c1p*c2p) * math.Sin(dhp/2*rad)
	lbp, cbp, hbp := (L1+L2)/2, (c1p+c2p)/2, h1p+h2p
	if c1p*c2p != 0 {
		switch {
		case math.Abs(h1p-h2p) <= 180:
			hbp = (h1p + h2p) / 2
		case h1p+h2p < 360:
			hbp = (h1p + h2p + 360) / 2
		default:
			hbp = (h1p + h2p - 360) / 2
		}
	}
	tt := 1 - 0.17*math.Cos((hbp-30)*rad) + 0.24*math.Cos(2*hbp*rad) + 0.32*math.Cos((3*hbp+6)*rad) - 0.20*math.Cos((4*hbp-63)*rad)
	dth := 30 * math.Exp(-math.Pow((hbp-275)/25, 2))
	rc := 2 * math.Sqrt(math.Pow(cbp, 7)/(math.Pow(cbp, 7)+math.Pow(25, 7)))
	sl := 1 + 0.015*math.Pow(lbp-50, 2)/math.Sqrt(20+math.Pow(lbp-50, 2))
	sc, sh := 1+0.045*cbp, 1+0.015*cbp*tt
	rt := -math.Sin(2*dth*rad) * rc
	return math.Sqrt(math.Pow(dLp/sl, 2) + math.Pow(dCp/sc, 2) + math.Pow(dHp/sh, 2) + rt*(dCp/sc)*(dHp/sh))
}

// Sharma, Wu and Dalal's test pairs for CIEDE2000 (a few of them).
func TestDeltaE2000(t *testing.T) {
	for _, tc := range []struct {
		a, b [3]float64
		want float64
	}{
		{[3]float64{50, 2.6772, -79.7751}, [3]float64{50, 0, -82.7485}, 2.0425},
		{[3]float64{50, 2.5, 0}, [3]float64{73, 25, -18}, 27.1492},
		{[3]float64{50, 2.5, 0}, [3]float64{50, 3.1736, 0.5854}, 1},
		{[3]float64{60.2574, -34.0099, 36.2677}, [3]float64{60.4626, -34.1751, 39.4387}, 1.2644},
	} {
		if got := deltaE2000(tc.a, tc.b); math.Abs(got-tc.want) > 1e-3 {
			t.Errorf("deltaE2000(%v, %v) = %.4f, want %.4f", tc.a, tc.b, got, tc.want)
		}
	}
}

// pageWidth is what a picture may take of a 1280-pixel window: less a
// scroll bar (15), the body's margins (20 each side) and a step box's
// border and padding (9 each side).
const pageWidth = 1280 - 15 - 2*20 - 2*9

// A zone of fifteen nodes wraps them into rows that fit the page, each
// node inside its zone's box; the nodes are told apart by name (the
// domain they all share said once, under the pictures).
func TestPlacementFitsThePage(t *testing.T) {
	page := string(svg(report20Placement([]int{0, 1}, 3)))
	svgs := regexp.MustCompile(`<svg [^>]*width="(\d+)" height="(\d+)"[^>]*class="(domainbox|podrow)"`).FindAllStringSubmatch(page, -1)
	if len(svgs) != 5 {
		t.Fatalf("%d pictures, want 3 zones, pending and evicted", len(svgs))
	}
	for _, m := range svgs {
		if w, _ := strconv.Atoi(m[1]); w > pageWidth {
			t.Errorf("a %s picture %dpx wide in a page of %dpx", m[3], w, pageWidth)
		}
	}
	for _, box := range strings.Split(page, `class="domainbox"`)[1:] {
		box = box[:strings.Index(box, "</svg>")]
		var w, h int
		fmt.Sscanf(box[strings.Index(box, `<rect x="1" y="1" width="`):], `<rect x="1" y="1" width="%d" height="%d"`, &w, &h)
		nodes := regexp.MustCompile(`<g transform="translate\((\d+),(\d+)\)"><rect width="(\d+)" height="(\d+)"`).FindAllStringSubmatch(box, -1)
		if len(nodes) != 15 {
			t.Fatalf("%d nodes in a zone, want 15", len(nodes))
		}
		for _, n := range nodes {
			var x, y, nw, nh int
			fmt.Sscan(n[1]+" "+n[2]+" "+n[3]+" "+n[4], &x, &y, &nw, &nh)
			if x+nw > w || y+nh > h {
				t.Errorf("a node at %d,%d runs out of its zone's box %dx%d", x, y, w, h)
			}
		}
	}
	labels := map[string]int{}
	for _, m := range regexp.MustCompile(`class="nlabel">([^<]*)<`).FindAllStringSubmatch(page, -1) {
		if labels[m[1]]++; labels[m[1]] == 2 {
			t.Errorf("several nodes are labelled %q", m[1])
		}
	}
	if labels["ip-10-0-1-14"] != 1 || !strings.Contains(page, `node names end in <b>.eu-west-1.compute.internal</b>`) {
		t.Errorf("node labels %v", labels)
	}
	// A workload's chip and name stay together in the legend.
	if !strings.Contains(page, `<span class="wl"><span class="chip" style="background:#0b6e4f"></span>reviews</span>`) {
		t.Error("the legend's chips are not kept with their names")
	}
}

func TestNodeGridAndSuffix(t *testing.T) {
	for n, want := range map[int][2]int{0: {1, 1}, 1: {1, 1}, 9: {9, 1}, 10: {5, 2}, 15: {8, 2}, 19: {7, 3}, 45: {9, 5}} {
		if c, r := nodeGrid(n); c != want[0] || r != want[1] || 12+c*(nodeW+nodeGap) > pageWidth {
			t.Errorf("nodeGrid(%d) = %d, %d, want %v", n, c, r, want)
		}
	}
	pl := samplePlacement()
	for names, want := range map[string]string{
		"n1 n2":                 "",
		"a.x.y b.x.y":           ".x.y",
		"a.x.y b.z.y":           ".y",
		"a.x.y x.y":             ".y",
		"only.one.node":         "",
		"a.b c":                 "",
		"node-000000 node-1.io": "",
	} {
		pl.Domains = nil
		for _, n := range strings.Fields(names) {
			pl.Domains = append(pl.Domains, result.Domain{Value: "z", Nodes: []result.NodeMark{{Name: n}}})
		}
		if got := nodeSuffix(pl); got != want {
			t.Errorf("nodeSuffix(%s) = %q, want %q", names, got, want)
		}
	}
}
