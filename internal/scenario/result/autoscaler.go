package result

import "time"

// Autoscaler is a HorizontalPodAutoscaler's replicas and metric over a
// run, sampled at each change of its status: what the report plots.
type Autoscaler struct {
	Cluster string `json:"cluster,omitempty"` // with several clusters
	Name    string `json:"name"`              // namespace/name
	// Metric names the HPA's first metric ("cpu utilisation %"); Target is
	// its target value, 0 if it has none the chart can draw.
	Metric      string             `json:"metric"`
	Target      float64            `json:"target,omitempty"`
	MinReplicas int32              `json:"minReplicas"`
	MaxReplicas int32              `json:"maxReplicas"`
	Samples     []AutoscalerSample `json:"samples"`
}

// AutoscalerSample is an HPA's status at one moment; it holds until the
// next sample.
type AutoscalerSample struct {
	At              time.Duration `json:"at"` // since the scenario began
	CurrentReplicas int32         `json:"currentReplicas"`
	DesiredReplicas int32         `json:"desiredReplicas"`
	// Metric is the first metric's current value, nil when the HPA has
	// none (not read yet, or the metric is missing).
	Metric *float64 `json:"metric,omitempty"`
}
