package stage

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/kubesim/kubesim/apis/kwok/v1alpha1"
)

// renderFenced renders tmpl as a pod's statusTemplate, failing t if the
// render takes longer than a fenced one ever should (the fence's own
// backstop is maxRenderTime; a busy machine gets ample room).
func renderFenced(t *testing.T, tmpl string) error {
	t.Helper()
	s, err := Compile(&v1alpha1.Stage{Spec: v1alpha1.StageSpec{
		ResourceRef: v1alpha1.StageResourceRef{Kind: "Pod"},
		Next:        v1alpha1.StageNext{StatusTemplate: tmpl},
	}})
	if err != nil {
		t.Fatalf("%s: %v", tmpl, err)
	}
	// The counts must stop these, not the clock: on a busy machine a
	// million steps can take longer than the backstop.
	defer func(d time.Duration) { maxRenderTime = d }(maxRenderTime)
	maxRenderTime = time.Minute
	done := make(chan error, 1)
	go func() {
		_, err := s.Plan(obj(t, pendingPod), Traits{}, testFuncs)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(90 * time.Second):
		t.Fatalf("%s: still rendering after 90s", tmpl)
		return nil
	}
}

// Templates that would run for hours, or build hundreds of MiB, stop at
// the fence: a failed render naming it, after a bounded amount of work
// counted in steps and bytes (not time), having built little.
func TestRunawayTemplatesStopAtTheFence(t *testing.T) {
	for _, tc := range []struct {
		tmpl string
		want error
	}{
		// Issue 33's two: nested loops, and a string doubled 27 times.
		{`{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}`, errFenced},
		{`{{ $s := "x" }}{{ range until 27 }}{{ $s = printf "%s%s" $s $s }}{{ end }}x: {{ len $s }}`, errTooLarge},
		// Loops no helper makes: a range over an int, over one list again and again.
		{`{{ range 100000 }}{{ range 100000 }}{{ end }}{{ end }}`, errTooManySteps},
		{`{{ $l := until 100000 }}{{ range $l }}{{ range $l }}{{ end }}{{ end }}`, errTooManySteps},
		// A template that calls itself twice, 40 deep: 2^40 calls.
		{`{{ define "t" }}{{ if lt (len .) 40 }}{{ template "t" (append . 1) }}{{ template "t" (append . 1) }}{{ end }}{{ end }}{{ template "t" list }}`, errFenced},
		// Lists and dicts that double without being printed, or hold themselves.
		{`{{ $l := list 1 }}{{ range until 64 }}{{ $l = list $l $l }}{{ end }}`, errTooLarge},
		{`{{ $l := list 1 }}{{ range until 64 }}{{ $l = concat $l $l }}{{ end }}`, errTooLarge},
		{`{{ $d := dict }}{{ $_ := set $d "me" $d }}x: {{ $d }}`, errTooLarge},
		{`{{ $s := "x" }}{{ range until 27 }}{{ $s = cat $s $s }}{{ end }}`, errTooLarge},
		{`{{ $s := "x" }}{{ range until 27 }}{{ $s = join "" (list $s $s) }}{{ end }}`, errTooLarge},
		// Helpers that multiply what they are given.
		{`{{ regexReplaceAll "" (repeat 100000 "x") (repeat 100000 "y") }}`, errTooLarge},
		{`{{ regexReplaceAll "x+" (repeat 100000 "x") (repeat 10000 "$0") }}`, errTooLarge},
		{`{{ regexReplaceAllLiteral "" (repeat 100000 "x") (repeat 100000 "y") }}`, errTooLarge},
		{`{{ printf (repeat 1000 "%999999d") 1 }}`, errTooLarge},
		{`{{ YAML . 50000000 }}`, errTooLarge},
		{`{{ split "" (repeat 1000000 "x") }}`, errTooLarge},
		// Small helpers, called a great many times on a large value.
		{`{{ $s := repeat 1000000 "x" }}{{ range until 100000 }}{{ $_ := upper $s }}{{ end }}`, errTooManyBytes},
	} {
		start := time.Now()
		err := renderFenced(t, tc.tmpl)
		if !errors.Is(err, tc.want) || !errors.Is(err, errFenced) {
			t.Errorf("%s: rendered with error %v, want %v", tc.tmpl, err, tc.want)
		}
		t.Logf("%v: %s", time.Since(start), tc.tmpl)
		if d := time.Since(start); d > 15*time.Second {
			t.Errorf("%s: stopped after %v, want well under 15s", tc.tmpl, d)
		}
	}
}

// The fence is spent per render: one render's steps are not the next's.
func TestEachRenderHasItsOwnFence(t *testing.T) {
	for i := range 3 {
		if err := renderFenced(t, `{{ range until 100000 }}{{ range until 8 }}{{ end }}{{ end }}x: 1`); err != nil {
			t.Fatalf("render %d: %v", i, err)
		}
	}
}

// fixedFuncs are testFuncs with the clock stopped, so two renders compare.
var fixedFuncs = func() template.FuncMap {
	funcs := template.FuncMap{}
	for k, v := range testFuncs {
		funcs[k] = v
	}
	funcs["Now"] = func() string { return "2026-01-01T00:00:00Z" }
	funcs["now"] = func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }
	return funcs
}()

// unfenced renders text as before the fence: sprig's helpers as they are,
// nothing counted.
func unfenced(t *testing.T, text string, o map[string]any) (string, error) {
	t.Helper()
	tmpl, err := template.New("x").Funcs(staticFuncs).Funcs(unavailableFuncs).Funcs(fixedFuncs).Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = tmpl.Execute(&out, o)
	return out.String(), err
}

// Every built-in stage and every one KWOK publishes renders under the
// fence exactly as it did without it, for a pod and a node in each state
// the tests know.
func TestBuiltinAndKWOKStagesRenderAsBefore(t *testing.T) {
	stages := kwokStages(t)
	for _, set := range Sets {
		builtin, err := Builtin(set)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range builtin {
			stages = append(stages, &v1alpha1.Stage{Spec: b.Spec})
			stages[len(stages)-1].Name = b.Name
		}
	}
	objects := map[string][]string{
		"Pod": {pendingPod, `
metadata: {name: p, namespace: default, uid: u1, deletionTimestamp: "2026-01-01T00:00:00Z", finalizers: [a]}
spec: {nodeName: node-000000, initContainers: [{name: i, image: busybox}], containers: [{name: c, image: nginx}], readinessGates: [{conditionType: x}]}
status: {phase: Running, podIP: 10.0.0.7, conditions: [{type: Ready, status: "True"}, {type: x, status: "False"}],
  containerStatuses: [{name: c, ready: true, restartCount: 2, state: {running: {startedAt: "2026-01-01T00:00:00Z"}}}]}
`},
		"Node": {`metadata: {name: node-000000, creationTimestamp: "2026-01-01T00:00:00Z"}`, `
metadata: {name: node-000000, labels: {a: b}}
spec: {podCIDR: 10.0.0.0/24}
status: {capacity: {cpu: "4", pods: "110"}, allocatable: {cpu: "4"}, conditions: [{type: Ready, status: "True"}], addresses: [{type: InternalIP, address: 10.64.0.1}]}
`},
	}
	rendered := 0
	for _, st := range stages {
		texts := []string{st.Spec.Next.StatusTemplate}
		for _, p := range st.Spec.Next.Patches {
			texts = append(texts, p.Template)
		}
		for _, text := range texts {
			if text == "" {
				continue
			}
			r, err := parseTemplate(st.Name, text)
			if err != nil {
				t.Fatalf("%s: %v", st.Name, err)
			}
			for _, y := range objects[st.Spec.ResourceRef.Kind] {
				want, wantErr := unfenced(t, text, obj(t, y))
				o := obj(t, y)
				c := &clone{fence: newFence()}
				c.t, _ = r.parsed.Clone()
				c.t.Funcs(c.fence.funcs).Funcs(fixedFuncs)
				c.fence.reset()
				var got bytes.Buffer
				err := c.t.Execute(&got, o)
				if (err != nil) != (wantErr != nil) || got.String() != want {
					t.Errorf("stage %s on %s: rendered %q (error %v), before the fence %q (error %v)",
						st.Name, strings.TrimSpace(y)[:20], got.String(), err, want, wantErr)
				}
				if err == nil {
					rendered++
				}
				if spent := maxRenderSteps - c.fence.steps; spent > 2000 {
					t.Errorf("stage %s took %d steps, want a few hundred at most", st.Name, spent)
				}
			}
		}
	}
	if rendered < len(stages) {
		t.Errorf("only %d renders succeeded for %d stages", rendered, len(stages))
	}
}
