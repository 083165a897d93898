package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const goodStage = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: slow}
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  next: {statusTemplate: "phase: Running"}
`

func TestReadStageFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	two := write("two.yaml", goodStage+"---\n"+strings.Replace(goodStage, "slow", "fast", 1))
	stages, err := readStageFiles([]string{two})
	if err != nil || len(stages) != 2 || !strings.Contains(stages[1], "name: fast") {
		t.Fatalf("two stages in a file: %q, %v", stages, err)
	}
	for _, c := range []struct{ file, want string }{
		{filepath.Join(dir, "missing.yaml"), "stageFiles[1]: open "},
		{write("empty.yaml", "# nothing\n"), "stageFiles[1]: " + filepath.Join(dir, "empty.yaml") + " holds no Stage"},
		{write("typo.yaml", strings.Replace(goodStage, "next:", "nxt:", 1)), "document 1: unknown field \"spec.nxt\""},
		{write("noname.yaml", strings.Replace(goodStage, "{name: slow}", "{}", 1)), "document 1: metadata.name: required"},
	} {
		_, err := readStageFiles([]string{two, c.file})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.file, err, c.want)
		}
	}
}
