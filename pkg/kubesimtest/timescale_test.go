package kubesimtest

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TimeScale(10) makes a cluster whose clock runs ten times real time: a
// second of the test is ten of the cluster's, which the API server's own
// timestamps show.
func TestTimeScale(t *testing.T) {
	started := time.Now()
	c := Start(t, TimeScale(10))
	cs := kubernetes.NewForConfigOrDie(c.Config())
	cm, err := cs.CoreV1().ConfigMaps("default").Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "now"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The cluster's clock started with it at the real time of its
	// creation; by now it is ahead by nine times the real time since.
	elapsed := time.Since(started)
	ahead := cm.CreationTimestamp.Sub(time.Now())
	if ahead < 4*elapsed || ahead > 10*elapsed+time.Second {
		t.Errorf("the cluster's time is %s ahead of real time %s after the test began, want about 9×", ahead, elapsed)
	}
}

func TestTimeScaleRefusesBadScales(t *testing.T) {
	for _, n := range []int{0, -1, 1001} {
		err := TimeScale(n)(&settings{})
		if err == nil || !strings.Contains(err.Error(), "kubesimtest.TimeScale") {
			t.Errorf("TimeScale(%d): %v, want an error naming the option", n, err)
		}
	}
}
