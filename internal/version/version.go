// Package version is kubesim's own version, stamped at link time by the
// Makefile (-X github.com/kubesim/kubesim/internal/version.Version=...).
package version

// Version of kubesim; "dev" when built without the Makefile.
var Version = "dev"
