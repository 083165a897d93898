// The upstream components as kubesim runs them, and the leaves they need.
// It requires nothing: the module that builds it — kubesim's own, or a
// Kubernetes version's under versions/ — pins the release it is built
// against, so that one source serves every version kubesim offers.
module github.com/kubesim/kubesim/upstream

go 1.27
