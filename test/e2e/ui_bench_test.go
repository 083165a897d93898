//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/chromedp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkUIAtScale is kubesim ui over 1,000 nodes and 10,000 pods in
// Chromium: when the map is first drawn, the page's JS heap and DOM, and
// a scale-down of 5,000 pods — how long until the page shows it, and the
// longest the page's main thread was busy meanwhile (a frozen page).
//
//	go test -tags e2e -run '^$' -bench BenchmarkUIAtScale -benchtime 1x ./test/e2e/
func BenchmarkUIAtScale(b *testing.B) {
	e := newEnv(b)
	e.createCluster("big", "--nodes", "1000")
	client := e.client()
	d := deployment("load", 10000)
	d.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
	if _, err := client.AppsV1().Deployments("default").Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	eventually(b, 5*time.Minute, "10,000 pods Running", func() error {
		d, err := client.AppsV1().Deployments("default").Get(context.Background(), "load", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if d.Status.ReadyReplicas != 10000 {
			return fmt.Errorf("%d ready", d.Status.ReadyReplicas)
		}
		return nil
	})
	base := startUI(b, e, "big", "--read-only")
	page := browser(b, 1600, 1000)
	b.ResetTimer()
	start := time.Now()
	if err := chromedp.Do(page, chromedp.Navigate(base), chromedp.WaitVisible(chromedp.CSS(`body[data-first-map-ms]`))); err != nil {
		b.Fatal(err)
	}
	wall := time.Since(start)
	first, err := chromedp.Run(page, chromedp.Evaluate[string](`document.body.dataset.firstMapMs`))
	if err != nil {
		b.Fatal(err)
	}
	ms, _ := strconv.ParseFloat(first, 64)
	b.ReportMetric(ms/1000, "s-first-map")
	b.ReportMetric(wall.Seconds(), "s-first-map-wall")
	heap, nodes := pageMetrics(b, page)
	b.ReportMetric(heap/(1<<20), "MiB-js-heap")
	b.ReportMetric(nodes, "dom-nodes")

	// The longest task on the main thread while 5,000 pods go.
	if _, err := chromedp.Run(page, chromedp.Evaluate[int](`window.__longest = 0; new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__longest = Math.max(window.__longest, e.duration); }).observe({type: "longtask"}); 1`)); err != nil {
		b.Fatal(err)
	}
	scaled := time.Now()
	e.kubectl("scale", "deployment", "load", "--replicas", "5000")
	var shown time.Duration
	eventually(b, 5*time.Minute, "the page showing 5,000 pods", func() error {
		n, err := chromedp.Run(page, chromedp.Evaluate[string](`document.getElementById("count-pods").textContent`))
		if err != nil {
			return err
		}
		if n != "5000" {
			return fmt.Errorf("%s pods on the page", n)
		}
		shown = time.Since(scaled)
		return nil
	})
	longest, err := chromedp.Run(page, chromedp.Evaluate[float64](`window.__longest`))
	if err != nil {
		b.Fatal(err)
	}
	slowest, _ := chromedp.Run(page, chromedp.Evaluate[string](`JSON.stringify(S.slowest)`))
	b.Logf("the page's slowest work, ms: %s", slowest)
	b.ReportMetric(shown.Seconds(), "s-scale-down-shown")
	b.ReportMetric(longest, "ms-longest-task")
	heap, _ = pageMetrics(b, page)
	b.ReportMetric(heap/(1<<20), "MiB-js-heap-after")
	shot(b, page, "ui-1000-nodes")
}

func pageMetrics(b *testing.B, page context.Context) (heap, nodes float64) {
	if _, err := chromedp.Call(page, performance.Enable, performance.EnableParams{}); err != nil {
		b.Fatal(err)
	}
	res, err := chromedp.Call(page, performance.GetMetrics, cdp.Empty{})
	if err != nil {
		b.Fatal(err)
	}
	for _, m := range res.Metrics {
		switch m.Name {
		case "JSHeapUsedSize":
			heap = m.Value
		case "Nodes":
			nodes = m.Value
		}
	}
	return heap, nodes
}
