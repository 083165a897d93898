package kwokcel

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func pvc(phase string) map[string]any {
	return map[string]any{
		"metadata": map[string]any{"name": "a", "creationTimestamp": time.Now().Add(-90 * time.Second).UTC().Format(time.RFC3339)},
		"spec":     map[string]any{"storageClassName": "kwok-volume"},
		"status":   map[string]any{"phase": phase},
	}
}

func TestConditionsOfKWOKsVolumeStages(t *testing.T) {
	for _, c := range []struct {
		expr string
		obj  map[string]any
		want bool
	}{
		{`self.spec.storageClassName == 'kwok-volume'`, pvc("Pending"), true},
		{`!has(self.metadata.deletionTimestamp)`, pvc("Pending"), true},
		{`has(self.spec.volumeName)`, pvc("Pending"), false},
		{`!(self.status.phase in ['Bound', 'Released', 'Failed'])`, pvc("Bound"), false},
		{`self.status.phase != 'Bound'`, pvc("Pending"), true},
		{`SinceSecond(self) > 60.0 && self.SinceSecond() < 120.0`, pvc("Pending"), true},
		{`Quantity("1Gi") + Quantity("512Mi") == Quantity("1.5Gi")`, pvc(""), true},
		{`UnixSecond(Now()) > 0.0 && Rand() < 1.0`, pvc(""), true},
		{`1`, pvc(""), false}, // not a bool: false
	} {
		p, err := Compile(c.expr)
		if err != nil {
			t.Fatalf("%s: %v", c.expr, err)
		}
		got, err := p.Bool(c.obj)
		if err != nil || got != c.want {
			t.Errorf("%s = %v, %v; want %v", c.expr, got, err, c.want)
		}
	}
}

func TestMissingFieldIsAnError(t *testing.T) {
	p, _ := Compile(`self.status.phase == 'Bound'`)
	if _, err := p.Bool(map[string]any{"metadata": map[string]any{}}); err == nil {
		t.Fatal("reading a missing field gave no error")
	}
}

func TestCompileErrorsAreOneLine(t *testing.T) {
	_, err := Compile(`self.spec. == `)
	if err == nil || strings.Contains(err.Error(), "\n") {
		t.Fatalf("got %v", err)
	}
}

func TestRunawayExpressionStopsAtTheBudget(t *testing.T) {
	p, err := Compile(`[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, a+b+c+d+e+f > 0))))))`)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = p.Bool(pvc(""))
	if !errors.Is(err, ErrOverBudget) {
		t.Fatalf("got %v, want the budget error", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
}

func TestValuesAsStrings(t *testing.T) {
	for expr, want := range map[string]string{
		`"5s"`:                              "5s",
		`duration("1500ms")`:                "1.5s",
		`timestamp("2026-01-02T03:04:05Z")`: "2026-01-02T03:04:05Z",
		`7`:                                 "7",
		`null`:                              "",
	} {
		p, err := Compile(expr)
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.String(nil)
		if err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", expr, got, err, want)
		}
	}
}

// A number written in an annotation converts, however it is indexed: the
// checker alone would plan int(x['n']) as int(int) and fail on the string.
func TestConversionsOfIndexedValues(t *testing.T) {
	obj := map[string]any{"metadata": map[string]any{"annotations": map[string]any{"gpu": "3", "ratio": "0.5"}}}
	for _, src := range []string{
		`int(self.metadata.annotations['gpu']) == 3`,
		`int(self.metadata.annotations.gpu) == 3`,
		`int(self['metadata']['annotations']['gpu']) > 2`,
		`double(self.metadata.annotations['ratio']) == 0.5`,
		`uint(self.metadata.annotations['gpu']) == 3u`,
	} {
		p, err := Compile(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if ok, err := p.Bool(obj); !ok || err != nil {
			t.Errorf("%s: %v, %v; want true", src, ok, err)
		}
	}
	if _, err := Compile(`Nwo() > 0`); err == nil {
		t.Error("an expression calling a function that does not exist compiled")
	}
}
