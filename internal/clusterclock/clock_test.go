package clusterclock

import (
	"strings"
	"testing"
	"time"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
	"github.com/kubesim/kubesim/internal/version"
)

func scaledBuild(t *testing.T) {
	old := version.Clock
	version.Clock = "go/test.diff"
	t.Cleanup(func() { version.Clock = old })
}

func TestNew(t *testing.T) {
	t.Setenv(ScaleEnv, "")
	if c, err := New(1); c != nil || err != nil {
		t.Errorf("New(1) = %v, %v; want real time", c, err)
	}
	if _, err := New(10); err == nil || !strings.Contains(err.Error(), "make build") {
		t.Errorf("New(10) in a build without the scaled clock: %v, want an error saying how to build", err)
	}
	scaledBuild(t)
	before := time.Now().UnixNano()
	c, err := New(10)
	if err != nil {
		t.Fatal(err)
	}
	if c.Scale != 10 || c.Epoch != c.Anchor || c.Anchor < before || c.Anchor > time.Now().UnixNano() {
		t.Errorf("New(10) = %+v, want scale 10 from now", c)
	}
}

func TestNewOnAScaledProcess(t *testing.T) {
	scaledBuild(t)
	t.Setenv(ScaleEnv, "20")
	t.Setenv(EpochEnv, "1000")
	t.Setenv(AnchorEnv, "500")
	own := Own()
	if own == nil || *own != (v1alpha1.Clock{Scale: 20, Epoch: 1000, Anchor: 500}) {
		t.Fatalf("Own() = %+v", own)
	}
	if c, err := New(20); err != nil || !Same(c, own) {
		t.Errorf("New(20) = %+v, %v; want this process's clock", c, err)
	}
	for _, scale := range []int32{1, 10} {
		if _, err := New(scale); err == nil || !strings.Contains(err.Error(), "timeScale") {
			t.Errorf("New(%d) on a 20× process: %v, want an error naming timeScale", scale, err)
		}
	}
	if got := Stretch(time.Second); got != 20*time.Second {
		t.Errorf("Stretch(1s) = %s, want 20s", got)
	}
}

func TestEnvAndNow(t *testing.T) {
	c := &v1alpha1.Clock{Scale: 60, Epoch: 5_000_000_000, Anchor: 1_000_000_000}
	got := strings.Join(Env(c), " ")
	if got != "KUBESIM_TIME_SCALE=60 KUBESIM_TIME_EPOCH=5000000000 KUBESIM_TIME_ANCHOR=1000000000" {
		t.Errorf("Env = %s", got)
	}
	if Env(nil) != nil {
		t.Errorf("Env(nil) = %v, want nothing", Env(nil))
	}
	// Two real seconds after the anchor, 120 s of cluster time have passed.
	if now := c.Now(time.Unix(3, 0)); now != time.Unix(125, 0) {
		t.Errorf("Now = %s, want %s", now, time.Unix(125, 0))
	}
	if !Same(nil, nil) || Same(c, nil) || !Same(c, &v1alpha1.Clock{Scale: 60, Epoch: 5_000_000_000, Anchor: 1_000_000_000}) {
		t.Error("Same compares clocks by value, nil as real time")
	}
}
