package cli

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/kubesim/kubesim/internal/cluster"
)

func TestOutputPrintsEachFormat(t *testing.T) {
	infos := []cluster.Info{{Name: "blue", Running: true, Status: "degraded", Cause: "etcd: cannot write its log: no space left on device", APIServer: "https://127.0.0.1:6443",
		Kubernetes: "v1.35.4", Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), TimeScale: 1, Time: time.Date(2026, 1, 2, 4, 4, 5, 0, time.UTC)}}
	table := func(w io.Writer) error { _, err := io.WriteString(w, "a table\n"); return err }
	for format, want := range map[output]string{
		"table": "a table\n",
		"json": `[
  {
    "name": "blue",
    "running": true,
    "status": "degraded",
    "cause": "etcd: cannot write its log: no space left on device",
    "apiServer": "https://127.0.0.1:6443",
    "kubernetes": "v1.35.4",
    "created": "2026-01-02T03:04:05Z",
    "timeScale": 1,
    "time": "2026-01-02T04:04:05Z"
  }
]
`,
		"yaml": `- apiServer: https://127.0.0.1:6443
  cause: 'etcd: cannot write its log: no space left on device'
  created: "2026-01-02T03:04:05Z"
  kubernetes: v1.35.4
  name: blue
  running: true
  status: degraded
  time: "2026-01-02T04:04:05Z"
  timeScale: 1
`,
	} {
		var b bytes.Buffer
		if err := format.print(&b, infos, table); err != nil || b.String() != want {
			t.Errorf("-o %s: %v\n%s\nwant\n%s", format, err, b.String(), want)
		}
	}
}

func TestOutputRefusesOtherFormats(t *testing.T) {
	var o output
	for _, format := range []string{"json", "yaml", "table"} {
		if err := o.Set(format); err != nil || o != output(format) {
			t.Errorf("Set(%q): %v, value %q", format, err, o)
		}
	}
	if err := o.Set("wide"); err == nil || o != "table" {
		t.Errorf("Set(wide): %v, value %q; want an error and the value unchanged", err, o)
	}
}
