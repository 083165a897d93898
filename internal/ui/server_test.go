package ui

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kubesim/kubesim/internal/scenario/result"
)

// The guard lets through only this server's name with its token, and a
// change only with the page's header; the token's first use sets the
// cookie and cleans a page's URL of it.
func TestGuard(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	h := guard("127.0.0.1:9", "secret", ok)
	for _, c := range []struct {
		method, host, target string
		header, cookie       string
		want                 int
	}{
		{"GET", "127.0.0.1:9", "/api/watch", "", "", http.StatusUnauthorized},
		{"GET", "127.0.0.1:9", "/api/watch?token=wrong", "", "", http.StatusUnauthorized},
		{"GET", "evil.example:9", "/api/watch?token=secret", "", "", http.StatusMisdirectedRequest},
		{"GET", "127.0.0.1:9", "/api/watch?token=secret", "", "", http.StatusTeapot},
		{"GET", "127.0.0.1:9", "/api/watch", "", "secret", http.StatusTeapot},
		{"GET", "127.0.0.1:9", "/?token=secret", "", "", http.StatusSeeOther},
		{"GET", "127.0.0.1:9", "/run.html?token=secret", "", "", http.StatusSeeOther},
		{"POST", "127.0.0.1:9", "/api/action", "", "secret", http.StatusForbidden},
		{"POST", "127.0.0.1:9", "/api/action", "1", "secret", http.StatusTeapot},
	} {
		r := httptest.NewRequest(c.method, c.target, nil)
		r.Host = c.host
		if c.header != "" {
			r.Header.Set(actionHeader, c.header)
		}
		if c.cookie != "" {
			r.AddCookie(&http.Cookie{Name: tokenCookie, Value: c.cookie})
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("%s %s (host %s, header %q, cookie %q): %d, want %d", c.method, c.target, c.host, c.header, c.cookie, w.Code, c.want)
		}
		if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
			t.Errorf("%s: Content-Security-Policy %q", c.target, csp)
		}
		if w.Code == http.StatusSeeOther && (w.Header().Get("Location") != strings.Split(c.target, "?")[0] || !strings.Contains(w.Header().Get("Set-Cookie"), "HttpOnly")) {
			t.Errorf("%s: redirected to %q, cookie %q", c.target, w.Header().Get("Location"), w.Header().Get("Set-Cookie"))
		}
	}
}

func TestListenRefusesOtherThanLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0", "192.0.2.1", "localhost", ""} {
		if _, _, err := listen(addr, 0); err == nil || !strings.Contains(err.Error(), "--address") {
			t.Errorf("listen(%q): %v", addr, err)
		}
	}
	ln, token, err := listen("127.0.0.1", 0)
	if err != nil || len(token) < 32 {
		t.Fatalf("listen on loopback: %v, token %q", err, token)
	}
	ln.Close()
}

// The run's page keeps its own copy of the run: a step running, then
// done with its assertions; clusters gone once the scenario is done.
func TestRunViewFollowsTheRun(t *testing.T) {
	stopped := 0
	v := &RunView{changed: make(chan struct{}), OpenCluster: func(name string) (string, func(), error) {
		return "http://127.0.0.1:1/?token=x", func() { stopped++ }, nil
	}}
	r := &result.Scenario{Name: "s", File: "s.yaml"}
	v.ScenarioStarted(r)
	v.ClustersReady(r, []string{"c"})
	step := &result.Step{Name: "assert", Action: "assert"}
	v.StepStarted(r, step)
	if s := v.state.Scenarios[0].Steps[0]; !s.Running {
		t.Errorf("a started step: %+v", s)
	}
	step.Duration = time.Second
	step.Assertions = []result.Outcome{{Name: "pods", Passed: false, Expected: "3", Actual: "2"}}
	v.StepDone(r, step)
	step.Assertions[0].Passed = true // the run's own, changed later: not the page's
	s := v.state.Scenarios[0].Steps[0]
	if s.Running || !s.Failed || s.Assertions[0].Passed || s.Seconds != 1 {
		t.Errorf("a done step: %+v", s)
	}
	v.ScenarioDone(r)
	if c := v.state.Scenarios[0].Clusters[0]; !c.Gone || c.URL != "" || stopped != 1 {
		t.Errorf("a cluster once the scenario is done: %+v, its page stopped %d times", c, stopped)
	}
	v.Finished(nil, "")
	if !v.state.Done || v.state.Outcome != "every scenario passed" || v.state.Report {
		t.Errorf("the run's end: %+v", v.state)
	}
}
