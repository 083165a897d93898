package explain

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// ErrNotRecorded: the scheduler keeps no attempt of the pod.
var ErrNotRecorded = errors.New("not recorded")

// ErrUnreachable: the scheduler's endpoint does not answer.
var ErrUnreachable = errors.New("scheduler unreachable")

// Client asks a cluster's scheduler for its records.
type Client struct {
	base string
	http *http.Client
}

// NewClient reaches the endpoint on the loopback port with tlsConfig: the
// cluster's CA, and a client certificate whose user may get the pods.
func NewClient(port int, tlsConfig *tls.Config) *Client {
	return &Client{
		base: "https://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		http: &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConfig}},
	}
}

// Pod returns the pod's last recorded attempt.
func (c *Client) Pod(ctx context.Context, namespace, name string) (*Explanation, error) {
	u := c.base + "/v1/namespaces/" + url.PathEscape(namespace) + "/pods/" + url.PathEscape(name)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		var urlErr *url.Error
		if errors.As(err, &urlErr) {
			err = urlErr.Err
		}
		return nil, fmt.Errorf("%w: %v", ErrUnreachable, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var p Problem
		if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
			return nil, fmt.Errorf("the scheduler answered %s", resp.Status)
		}
		if p.Reason == NotRecorded {
			return nil, fmt.Errorf("%w: %s", ErrNotRecorded, p.Message)
		}
		return nil, errors.New(p.Message)
	}
	e := &Explanation{}
	if err := json.NewDecoder(resp.Body).Decode(e); err != nil {
		return nil, fmt.Errorf("reading the scheduler's answer: %w", err)
	}
	return e, nil
}
