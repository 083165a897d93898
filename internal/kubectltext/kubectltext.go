// Package kubectltext leaves kubectl's translations unloaded in the
// processes of a cluster.
//
// kubectl's command packages translate their help at package init, and the
// first translation loads the catalogue: it zips and parses kubectl's .po
// and .mo files (~25 ms and 4.6 MB of allocations). Every package of the one
// kubesim binary is initialised in every process, so each component paid
// that for help text it never prints. kubectl itself (`kubesim kubectl`)
// and the rest of the CLI load the catalogue as before.
//
// main imports this package; its init runs as soon as kubectl's i18n
// package is ready, before any package that translates (it needs nothing
// else, and Go initialises ready packages in import-path order).
package kubectltext

import (
	"os"

	"k8s.io/kubectl/pkg/util/i18n"
)

func init() {
	if !IsComponent(os.Args) {
		return
	}
	_ = i18n.SetLoadTranslationsFunc(noCatalogue)
}

// noCatalogue loads nothing: a translation is then its English source text.
func noCatalogue() error { return nil }

// IsComponent says whether args run one process of a cluster (`kubesim
// component NAME ...`). main decides by it too, so the two cannot differ.
func IsComponent(args []string) bool {
	return len(args) > 2 && args[1] == "component"
}
