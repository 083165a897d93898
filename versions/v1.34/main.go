// Command kube is the kube-apiserver, kube-controller-manager and
// kube-scheduler of Kubernetes v1.34, as kubesim runs them: `kube NAME
// ARGS` (versions/README.md).
package main

import "github.com/kubesim/kubesim/upstream/components"

func main() { components.Main() }
