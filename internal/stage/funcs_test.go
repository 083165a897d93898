package stage

import (
	"strings"
	"testing"
)

// A Stage's templates get no environment, no network, no keys: such a
// helper is undefined, so the Stage does not compile, and the error names
// the template and the helper.
func TestTemplatesCannotReachOutsideTheProcess(t *testing.T) {
	for _, call := range []string{
		`env "AWS_SECRET_ACCESS_KEY"`, `expandenv "$HOME"`, `getHostByName "example.com"`,
		`genPrivateKey "rsa"`, `genCA "ca" 365`, `bcrypt "secret"`, `derivePassword 1 "long" "pw" "user" "site"`,
	} {
		name := strings.Fields(call)[0]
		_, err := compileSpec("  resourceRef: {kind: Pod}\n  next: {statusTemplate: 'message: {{ " + call + " }}'}\n")
		if err == nil || !strings.Contains(err.Error(), "spec.next.statusTemplate") ||
			!strings.Contains(err.Error(), `function "`+name+`" not defined`) {
			t.Errorf("{{ %s }}: compiled with error %v, want %q not defined in spec.next.statusTemplate", call, err, name)
		}
	}
}
