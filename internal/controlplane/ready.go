package controlplane

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

func getOK(ctx context.Context, client *http.Client, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s%s", url, resp.Status, failedChecks(resp.Body))
	}
	return nil
}

// failedChecks names the checks a failed /readyz or /livez lists
// ("[-]etcd failed: reason withheld"), so that a log says which one.
func failedChecks(body io.Reader) string {
	var failed []string
	lines := bufio.NewScanner(io.LimitReader(body, 64<<10))
	for lines.Scan() {
		if name, ok := strings.CutPrefix(lines.Text(), "[-]"); ok {
			name, _, _ = strings.Cut(name, " ")
			failed = append(failed, name)
		}
	}
	if len(failed) == 0 {
		return ""
	}
	return " (failed: " + strings.Join(failed, ", ") + ")"
}
