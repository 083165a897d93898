package stage

import (
	"text/template"
	"time"

	"github.com/Masterminds/sprig/v3"
)

// Stages are code from whoever may apply one, run inside the simulator:
// their templates get helpers that compute, never ones that reach outside
// the process.

// staticFuncs are helpers that depend on nothing but their arguments (and
// the clock): sprig's hermetic library (dict, list, default, …; no env,
// expandenv or getHostByName) less its key, certificate and password
// helpers, with sizes bounded, and KWOK's own names.
var staticFuncs = func() template.FuncMap {
	funcs := sprig.HermeticTxtFuncMap()
	for _, name := range withheldFuncs {
		delete(funcs, name)
	}
	bound(funcs)
	funcs["Now"] = func() string { return time.Now().UTC().Format(time.RFC3339Nano) }
	funcs["Quote"] = quote
	funcs["YAML"] = toYAML
	return funcs
}()

// withheldFuncs are the sprig helpers the hermetic library still has that
// a Stage must not get: most draw on the OS's entropy, several cost
// seconds of CPU or tens of MiB a call by design (keys, bcrypt, scrypt),
// and a status has no use for any of them.
var withheldFuncs = []string{
	"bcrypt", "htpasswd", "derivePassword", "genPrivateKey", "buildCustomCert",
	"genCA", "genCAWithKey", "genSelfSignedCert", "genSelfSignedCertWithKey",
	"genSignedCert", "genSignedCertWithKey", "encryptAES", "decryptAES",
}
