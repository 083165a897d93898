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

// checked remembers, per binary, what checkBinary found: each binary is
// asked once per process.
var checked struct {
	mu   sync.Mutex
	errs map[string]error
}

// checkBinary refuses a binary older than the types this package writes.
func checkBinary(bin string) error {
	checked.mu.Lock()
	defer checked.mu.Unlock()
	if err, ok := checked.errs[bin]; ok {
		return err
	}
	out, err := runBinary(bin, nil, 30*time.Second, "version", "-o", "json")
	err = checkRevision(describeBinary(bin), []byte(out), err)
	if checked.errs == nil {
		checked.errs = map[string]error{}
	}
	checked.errs[bin] = err
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

// runBinary runs bin with args and env (nil: this process's) and returns
// its stdout; an error is the last line it wrote to stderr, kubesim's own
// one-line message (what came before is progress).
func runBinary(bin string, env []string, timeout time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndex(msg, "\n"); i >= 0 {
			msg = msg[i+1:]
		}
		if msg == "" {
			msg = err.Error()
		}
		return stdout.String(), errors.New(msg)
	}
	return stdout.String(), nil
}
