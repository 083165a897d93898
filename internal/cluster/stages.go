package cluster

import (
	"fmt"
	"os"

	"github.com/kubesim/kubesim/internal/manifest"
	"github.com/kubesim/kubesim/internal/stage"
)

// readStageFiles reads the Cluster's stageFiles, one Stage manifest per
// document, each checked as the simulator would compile it, so a bad one
// is reported at create rather than as a Warning Event later.
func readStageFiles(files []string) ([]string, error) {
	var stages []string
	for i, file := range files {
		field := fmt.Sprintf("stageFiles[%d]", i)
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", field, err)
		}
		docs, err := manifest.Documents(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", field, file, err)
		}
		if len(docs) == 0 {
			return nil, fmt.Errorf("%s: %s holds no Stage", field, file)
		}
		for j, doc := range docs {
			s, err := stage.Parse(doc)
			if err == nil && s.Name == "" {
				err = fmt.Errorf("metadata.name: required")
			}
			if err == nil {
				_, err = stage.Compile(s)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %s, document %d: %w", field, file, j+1, err)
			}
			stages = append(stages, string(doc))
		}
	}
	return stages, nil
}
