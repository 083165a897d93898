package kubesimtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

// Binary is the kubesim binary the package runs: $KUBESIM_BINARY, else
// kubesim on $PATH.
func Binary() (string, error) {
	if bin := os.Getenv("KUBESIM_BINARY"); bin != "" {
		if info, err := os.Stat(bin); err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
			return "", fmt.Errorf("KUBESIM_BINARY=%s is not an executable file; build one with `make build` in a kubesim checkout (bin/kubesim)", bin)
		}
		return bin, nil
	}
	bin, err := exec.LookPath("kubesim")
	if err != nil {
		return "", errors.New("no kubesim binary: set KUBESIM_BINARY to one, or put kubesim on PATH (in a kubesim checkout: `make build` makes bin/kubesim, `make install` puts it in $(go env GOPATH)/bin)")
	}
	return bin, nil
}

// describeBinary names bin as the user chose it, for messages.
func describeBinary(bin string) string {
	if os.Getenv("KUBESIM_BINARY") == bin {
		return "KUBESIM_BINARY " + bin
	}
	return "kubesim on PATH (" + bin + ")"
}

// once runs what kubesimtest asks a binary once per binary and process,
// and remembers the answer, failures too.
type once[T any] struct {
	mu   sync.Mutex
	done map[string]onceResult[T]
}

type onceResult[T any] struct {
	v   T
	err error
}

func (o *once[T]) get(bin string, ask func() (T, error)) (T, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if r, ok := o.done[bin]; ok {
		return r.v, r.err
	}
	v, err := ask()
	if o.done == nil {
		o.done = map[string]onceResult[T]{}
	}
	o.done[bin] = onceResult[T]{v, err}
	return v, err
}

var (
	checked      once[struct{}]
	defaultNodes once[*corev1.Node]
)

// checkBinary refuses a binary older than the types this package writes.
func checkBinary(bin string) error {
	_, err := checked.get(bin, func() (struct{}, error) {
		out, err := output(bin, "version", "-o", "json")
		return struct{}{}, checkRevision(describeBinary(bin), out, err)
	})
	return err
}

// checkRevision reads `kubesim version -o json` (out, or the error running
// it) and says, in one line, why the binary will not do, if it will not.
func checkRevision(binary string, out []byte, runErr error) error {
	fix := fmt.Sprintf("this kubesimtest needs API revision %d or later: rebuild it (make build)", v1alpha1.Revision)
	if runErr != nil {
		// Binaries before revision 1 have no `version -o json`.
		return fmt.Errorf("%s cannot say its API revision (kubesim version -o json: %v); %s", binary, runErr, fix)
	}
	var info struct {
		Kubesim     string `json:"kubesim"`
		APIRevision *int   `json:"apiRevision"`
	}
	if err := json.Unmarshal(out, &info); err != nil || info.APIRevision == nil {
		return fmt.Errorf("%s printed no API revision (kubesim version -o json: %.80q); %s", binary, out, fix)
	}
	if *info.APIRevision < v1alpha1.Revision {
		return fmt.Errorf("%s is kubesim %s (API revision %d); %s", binary, info.Kubesim, *info.APIRevision, fix)
	}
	return nil
}

// defaultNode is the binary's default node (`kubesim get node-template`),
// the template Label, Taint and Capacity change when Template is not given.
func defaultNode(bin string) (*corev1.Node, error) {
	node, err := defaultNodes.get(bin, func() (*corev1.Node, error) {
		out, err := output(bin, "get", "node-template")
		if err != nil {
			return nil, fmt.Errorf("reading kubesim's default node: kubesim get node-template: %w", err)
		}
		node := &corev1.Node{}
		if err := yaml.Unmarshal(out, node); err != nil {
			return nil, fmt.Errorf("reading kubesim's default node: %w", err)
		}
		return node, nil
	})
	if err != nil {
		return nil, err
	}
	return node.DeepCopy(), nil
}

// output runs the binary briefly, outside any cluster, and returns its
// stdout; an error carries the last line it wrote to stderr.
func output(bin string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndex(msg, "\n"); i >= 0 {
			msg = msg[i+1:]
		}
		if msg == "" {
			msg = err.Error()
		}
		return nil, errors.New(msg)
	}
	return stdout.Bytes(), nil
}
