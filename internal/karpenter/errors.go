package karpenter

import "fmt"

func errUnknownAutoscaler(v string) error {
	return fmt.Errorf("%q is no autoscaler kubesim runs; use karpenter (the Cluster Autoscaler is not offered)", v)
}
