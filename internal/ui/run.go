package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/kubesim/kubesim/internal/clusterclock"
	"github.com/kubesim/kubesim/internal/scenario/result"
)

// RunView is `kubesim run --ui`: a page of the run as it goes — each
// scenario's steps and assertions as they pass or fail, a link to each of
// its clusters' own page (read-only) while they exist, and the HTML
// report once the run is over. It hears of the run as the terminal does
// (scenario.Live), keeping its own copy of what it shows: the run's
// results are the run's goroutine's to change.
type RunView struct {
	// OpenCluster serves the page of a cluster the run made, returning
	// its URL and how to stop it.
	OpenCluster func(name string) (url string, stop func(), err error)

	mu      sync.Mutex
	state   runState
	changed chan struct{} // closed at each change, and made anew
	stops   []func()      // every cluster page's
	pages   []func()      // the current scenario's cluster pages'
	report  string        // the HTML report's file, once written
	current *runScenario

	token string
	ln    net.Listener
	srv   *http.Server
	URL   string
}

type runState struct {
	Scenarios []*runScenario `json:"scenarios"`
	Done      bool           `json:"done"`
	// Outcome is how the run ended, as the command says it.
	Outcome string `json:"outcome,omitempty"`
	Report  bool   `json:"report"` // served at /report
	// ReportFile is where it was written.
	ReportFile string `json:"reportFile,omitempty"`
}

type runScenario struct {
	Name     string       `json:"name"`
	File     string       `json:"file"`
	Setup    string       `json:"setup,omitempty"`
	Clusters []runCluster `json:"clusters,omitempty"`
	Steps    []*runStep   `json:"steps"`
	Done     bool         `json:"done"`
	Passed   bool         `json:"passed"`
}

type runCluster struct {
	Name  string `json:"name"`
	URL   string `json:"url,omitempty"`
	Gone  bool   `json:"gone,omitempty"`
	Error string `json:"error,omitempty"`
}

type runStep struct {
	Name       string           `json:"name"`
	Action     string           `json:"action"`
	Cluster    string           `json:"cluster,omitempty"`
	Running    bool             `json:"running,omitempty"`
	Failed     bool             `json:"failed,omitempty"`
	Seconds    float64          `json:"seconds,omitempty"`
	Detail     string           `json:"detail,omitempty"`
	Error      string           `json:"error,omitempty"`
	Assertions []result.Outcome `json:"assertions,omitempty"`
}

// ListenRun listens on address (loopback only) for the run's page.
func ListenRun(address string, port int, openCluster func(string) (string, func(), error)) (*RunView, error) {
	ln, token, err := listen(address, port)
	if err != nil {
		return nil, err
	}
	v := &RunView{OpenCluster: openCluster, changed: make(chan struct{}), token: token, ln: ln,
		URL: "http://" + ln.Addr().String() + "/run.html?token=" + token}
	mux := http.NewServeMux()
	files, _ := fs.Sub(static, "static")
	mux.Handle("GET /", http.FileServerFS(files))
	mux.HandleFunc("GET /api/run", v.watch)
	mux.HandleFunc("GET /report", v.serveReport)
	v.srv = &http.Server{Handler: guard(ln.Addr().String(), token, mux), ReadHeaderTimeout: clusterclock.Stretch(10 * time.Second)}
	return v, nil
}

// Serve answers until ctx ends; then it stops the clusters' pages.
func (v *RunView) Serve(ctx context.Context) error {
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), clusterclock.Stretch(2*time.Second))
		defer cancel()
		_ = v.srv.Shutdown(shutdown)
		v.mu.Lock()
		defer v.mu.Unlock()
		for _, stop := range v.stops {
			stop()
		}
	}()
	if err := v.srv.Serve(v.ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// change applies f to the state and tells the pages (v.mu not held).
func (v *RunView) change(f func()) {
	v.mu.Lock()
	defer v.mu.Unlock()
	f()
	close(v.changed)
	v.changed = make(chan struct{})
}

func (v *RunView) ScenarioStarted(r *result.Scenario) {
	v.change(func() {
		v.current = &runScenario{Name: r.Name, File: r.File, Steps: []*runStep{}}
		v.state.Scenarios = append(v.state.Scenarios, v.current)
	})
}

func (v *RunView) ClustersReady(_ *result.Scenario, clusters []string) {
	var opened []runCluster
	for _, name := range clusters {
		c := runCluster{Name: name}
		url, stop, err := v.OpenCluster(name)
		if err != nil {
			c.Error = err.Error()
		} else {
			c.URL = url
			v.mu.Lock()
			v.stops = append(v.stops, stop)
			v.pages = append(v.pages, stop)
			v.mu.Unlock()
		}
		opened = append(opened, c)
	}
	v.change(func() { v.current.Clusters = opened })
}

func (v *RunView) StepStarted(_ *result.Scenario, s *result.Step) {
	v.change(func() {
		v.current.Steps = append(v.current.Steps, &runStep{Name: s.Name, Action: s.Action, Cluster: s.Cluster, Running: true})
	})
}

func (v *RunView) StepDone(_ *result.Scenario, s *result.Step) {
	done := &runStep{Name: s.Name, Action: s.Action, Cluster: s.Cluster, Failed: s.Failed(), Seconds: s.Duration.Seconds(),
		Detail: s.Detail, Error: s.Error, Assertions: append([]result.Outcome(nil), s.Assertions...)}
	v.change(func() {
		if n := len(v.current.Steps); n > 0 {
			v.current.Steps[n-1] = done
		}
	})
}

func (v *RunView) ScenarioDone(r *result.Scenario) {
	setup, passed := r.Setup, r.Passed
	v.mu.Lock()
	pages := v.pages
	v.pages = nil
	v.mu.Unlock()
	for _, stop := range pages {
		stop() // the clusters are gone
	}
	v.change(func() {
		v.current.Done, v.current.Passed, v.current.Setup = true, passed, setup
		for i := range v.current.Clusters {
			v.current.Clusters[i].Gone = true // deleted, or kept without a page
			v.current.Clusters[i].URL = ""
		}
	})
}

// Finished says the run is over: how it ended, and its HTML report
// ("" if none was written).
func (v *RunView) Finished(outcome error, report string) {
	v.change(func() {
		v.state.Done = true
		v.state.Outcome = "every scenario passed"
		if outcome != nil {
			v.state.Outcome = outcome.Error()
		}
		v.report = report
		v.state.Report, v.state.ReportFile = report != "", report
	})
}

// watch streams the run's state, whole, at each change.
func (v *RunView) watch(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for {
		v.mu.Lock()
		msg, err := json.Marshal(v.state)
		changed := v.changed
		v.mu.Unlock()
		if err != nil {
			return
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", msg); err != nil {
			return
		}
		flusher.Flush()
		select {
		case <-r.Context().Done():
			return
		case <-changed:
		case <-time.After(clusterclock.Stretch(15 * time.Second)): // keeps the stream alive
		}
	}
}

func (v *RunView) serveReport(w http.ResponseWriter, r *http.Request) {
	v.mu.Lock()
	path := v.report
	v.mu.Unlock()
	if path == "" {
		http.Error(w, "no report yet: it is written when the run is over", http.StatusNotFound)
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	// The report is self-contained, with its own inline script and
	// style: its policy allows those, and nothing from elsewhere.
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	_, _ = w.Write(data)
}
