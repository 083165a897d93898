package components

import "strings"

// BootstrapHooks are the API server's two post-start hooks that write its
// default objects — the RBAC policy and the system PriorityClasses. They
// first sleep a second (upstream's wait.Poll; patch 0005 makes them try at
// once), then write one object at a time, so /readyz waits on them. In a
// cluster of kubesim's own Kubernetes version, kubesim asks /readyz
// without them and writes the very same objects itself, many at a time,
// from the same upstream package, before any component starts; the hooks
// then find them there. They still run, and still reconcile.
var BootstrapHooks = []string{
	"poststarthook/rbac/bootstrap-roles",
	"poststarthook/scheduling/bootstrap-system-priority-classes",
}

// APIServerReadyPath is the API server's readiness without BootstrapHooks.
func APIServerReadyPath() string {
	return "/readyz?exclude=" + strings.Join(BootstrapHooks, "&exclude=")
}
