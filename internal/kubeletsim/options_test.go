package kubeletsim

import (
	"context"
	"testing"
	"time"
)

// Options a simulator cannot run with are refused before it starts, by
// an error naming the flag: a zero renew interval once reached the
// renewal's jitter and panicked.
func TestRunRefusesOptionsNamingTheFlag(t *testing.T) {
	for want, change := range map[string]func(*Options){
		"--node-lease-duration: must be at least 1s, e.g. 40s":    func(o *Options) { o.LeaseDuration = 999 * time.Millisecond },
		"--node-lease-renew-interval: must be positive, e.g. 10s": func(o *Options) { o.LeaseRenewInterval = 0 },
		"--node-lease-renew-interval: must be shorter than --node-lease-duration (40s), e.g. a quarter of it": func(o *Options) {
			o.LeaseRenewInterval = 40 * time.Second
		},
		"--kubelet-port: must be 1-65535, e.g. 10250": func(o *Options) { o.KubeletPort = 65536 },
	} {
		opts := DefaultOptions()
		if err := opts.Validate(); err != nil {
			t.Fatalf("the defaults: %v", err)
		}
		change(&opts)
		if err := Run(context.Background(), opts); err == nil || err.Error() != want {
			t.Errorf("Run: %v, want %s", err, want)
		}
	}
}
