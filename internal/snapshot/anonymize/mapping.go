package anonymize

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac/bootstrappolicy"
)

// Anonymizer maps the strings of a snapshot through an HMAC keyed by its
// key: the same key maps the same string the same way, every time and
// wherever the string stands. It is not safe for concurrent use.
type Anonymizer struct {
	key []byte
	// derived holds the names built from other names (see derived.go),
	// collected from the objects of the current Objects call.
	derived map[string][]part
	// memo caches str; sources records which string each mapped string
	// came from, to catch two strings mapped to one.
	memo    map[string]string
	sources map[string]string
	clash   []string
}

// New returns an Anonymizer for key (from NewKey or ParseKey).
func New(key []byte) *Anonymizer {
	a := &Anonymizer{key: append([]byte(nil), key...)}
	a.reset()
	return a
}

func (a *Anonymizer) reset() {
	a.derived = map[string][]part{}
	a.memo = map[string]string{}
	a.sources = map[string]string{}
	a.clash = nil
}

// tokenLen is the length of a mapped name: a letter, then base-36 digits,
// about 51 bits, so a cluster's names do not collide (and a collision
// would be reported, not merged). Short enough that a name built from two
// mapped names and a generated suffix stays within a DNS label's 63.
const tokenLen = 10

// token is the keyed mapping of one string: a valid DNS-1035 label (so a
// Service name too), and a valid label value.
func (a *Anonymizer) token(s string) string {
	mac := hmac.New(sha256.New, a.key)
	mac.Write([]byte("kubesim-anonymize/1\x00"))
	mac.Write([]byte(s))
	sum := mac.Sum(nil)
	out := make([]byte, tokenLen)
	out[0] = 'a' + sum[0]%26
	n := binary.BigEndian.Uint64(sum[1:9])
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	for i := 1; i < tokenLen; i++ {
		out[i] = digits[n%36]
		n /= 36
	}
	return string(out)
}

// Name maps a name, or any string that may name something, the way every
// reference to it in the objects of the last Objects call was mapped.
// The CLI uses it for strings outside the objects (the source's name in
// the snapshot header).
func (a *Anonymizer) Name(s string) string { return a.str(s) }

// str is the one mapping of names: kept names and values that name
// nothing stay; a name derived from others is rebuilt from their
// mappings; anything else becomes its token.
func (a *Anonymizer) str(s string) string {
	if out, ok := a.memo[s]; ok {
		return out
	}
	var out string
	switch parts, derived := a.derived[s]; {
	case isKeptName(s) || namesNothing(s):
		out = s
	case derived:
		var b strings.Builder
		for _, p := range parts {
			if p.keep {
				b.WriteString(p.s)
			} else {
				b.WriteString(a.str(p.s))
			}
		}
		out = b.String()
	case strings.HasPrefix(s, "/"): // a path stays a path (local volumes require it)
		out = "/" + a.token(s)
	default:
		out = a.token(s)
	}
	a.memo[s] = out
	if prev, ok := a.sources[out]; ok && prev != s {
		a.clash = append(a.clash, out)
	}
	a.sources[out] = s
	return out
}

// value maps the value of a label, annotation, selector or taint with
// the given key: the same function for a label and every selector on
// that key, so selectors keep selecting what they selected. The values
// of the keys keptValue lists are kept: their meaning is their value.
func (a *Anonymizer) value(key, v string) string {
	switch {
	case keptValue(key):
		return v
	case hashKeys[key]:
		if _, derived := a.derived[v]; derived { // a StatefulSet's <name>-<hash>
			return a.str(v)
		}
		return v
	}
	return a.str(v)
}

// keptNames are the names the API server, its controllers or kubesim
// create or look for by name in every cluster: mapping them would make
// the clone miss them, or copy them under new names, and they say
// nothing about the source.
var keptNames = map[string]bool{
	"default": true, "kube-system": true, "kube-public": true, "kube-node-lease": true,
	"kubernetes":              true, // the API server's Service
	"system-cluster-critical": true, "system-node-critical": true,
	"default-scheduler": true,
	// kubesim's own, in a source that is a kubesim cluster: the dpdb
	// controller's namespace and usage-metrics' Service in kube-system.
	"kubesim-dpdb": true, "kubesim-usage-metrics": true,
}

// isKeptName reports a name of keptNames or of the service accounts
// upstream's RBAC bootstrap binds in kube-system (the controllers', the
// scheduler's…), which every cluster's controller-manager makes.
func isKeptName(s string) bool { return keptNames[s] || systemAccounts()[s] }

// systemAccounts are read from upstream's bootstrap policy, once and on
// first use (every component process links this package).
var systemAccounts = sync.OnceValue(func() map[string]bool {
	names := map[string]bool{}
	add := func(subjects []rbacv1.Subject) {
		for _, s := range subjects {
			if s.Kind == rbacv1.ServiceAccountKind && s.Namespace == metav1.NamespaceSystem {
				names[s.Name] = true
			}
		}
	}
	for _, b := range bootstrappolicy.ControllerRoleBindings() {
		add(b.Subjects)
	}
	for _, bindings := range bootstrappolicy.NamespaceRoleBindings() {
		for _, b := range bindings {
			add(b.Subjects)
		}
	}
	return names
})

// keptValueKeys are the label, annotation and taint keys whose values
// are kept, each for its reason (docs/clone.md lists them, with the
// prefixes of keptValuePrefixes). Other keys' values are mapped, those
// of well-known domains too: app.kubernetes.io/name and its kin,
// kubernetes.io/hostname, kubernetes.io/metadata.name,
// statefulset.kubernetes.io/pod-name, job-name and
// volume.kubernetes.io/selected-node name the source's things, each
// mapped as what it names so controllers still match them; and a key
// not known here is mapped, so a new one holding a name does not leak.
var keptValueKeys = map[string]bool{
	// What a node is: it decides where pods fit.
	"kubernetes.io/os": true, "kubernetes.io/arch": true,
	"beta.kubernetes.io/os": true, "beta.kubernetes.io/arch": true,
	"node.kubernetes.io/instance-type": true, "beta.kubernetes.io/instance-type": true,
	"node.kubernetes.io/windows-build":       true,
	"failure-domain.beta.kubernetes.io/zone": true, "failure-domain.beta.kubernetes.io/region": true,
	// Policy: the API server accepts only its levels and versions.
	"pod-security.kubernetes.io/enforce": true, "pod-security.kubernetes.io/enforce-version": true,
	"pod-security.kubernetes.io/audit": true, "pod-security.kubernetes.io/audit-version": true,
	"pod-security.kubernetes.io/warn": true, "pod-security.kubernetes.io/warn-version": true,
	// Profiles the API server validates and matches against the
	// security context's fields (kept); the per-container keys are in
	// containerKeys.
	"seccomp.security.alpha.kubernetes.io/pod": true,
	// Settings of upstream's controllers and proxies, by their words.
	"addonmanager.kubernetes.io/mode":            true,
	"service.kubernetes.io/topology-mode":        true,
	"service.kubernetes.io/topology-aware-hints": true,
	"service.kubernetes.io/service-proxy-name":   true,
	"node.kubernetes.io/out-of-service":          true,
	"csi.storage.k8s.io/fstype":                  true,
	// A pod's resource claim entry name (kept in the pod): the claim
	// controller finds a template's claim by it.
	"resource.kubernetes.io/pod-claim-name": true,
	// Software, not the source's: the kubelet's static-pod bookkeeping,
	// CSI driver names, the simulator's node marker ("fake").
	"kubernetes.io/config.hash": true, "kubernetes.io/config.mirror": true,
	"kubernetes.io/config.source": true, "kubernetes.io/config.seen": true,
	"volume.kubernetes.io/storage-provisioner":      true,
	"volume.beta.kubernetes.io/storage-provisioner": true,
	"volume.kubernetes.io/storage-resizer":          true,
	"kwok.x-k8s.io/node":                            true,
}

// keptValuePrefixes are key families whose every value is kept: topology
// (zones and regions, so spreading means what it meant: every key of a
// topology.* domain, topology.kubernetes.io/zone or a CSI driver's
// topology.ebs.csi.aws.com/zone), node-feature-discovery's hardware
// facts, the volume binder's pv.kubernetes.io/* (bind-completed,
// provisioned-by), the simulator's chaos.kubesim.io/* (which failure to
// simulate: its words), and the per-container seccomp and AppArmor
// profiles.
var keptValuePrefixes = []string{"topology.", "feature.node.kubernetes.io/", "pv.kubernetes.io/", "chaos.kubesim.io/",
	seccompContainerPrefix, appArmorContainerPrefix}

// keptValue reports whether the values of key are kept.
func keptValue(key string) bool {
	if keptValueKeys[key] {
		return true
	}
	for _, p := range keptValuePrefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// Annotation keys that end in a container's name: the name is mapped as
// the container's is (the API server refuses a profile for a container
// the pod lacks), the profile kept.
const (
	seccompContainerPrefix  = "container.seccomp.security.alpha.kubernetes.io/"
	appArmorContainerPrefix = "container.apparmor.security.beta.kubernetes.io/"
)

var containerKeys = []string{seccompContainerPrefix, appArmorContainerPrefix}

// annotationKey maps the container name in an annotation key of
// containerKeys; any other key is kept.
func (a *Anonymizer) annotationKey(key string) string {
	for _, p := range containerKeys {
		if name, ok := strings.CutPrefix(key, p); ok && name != "" {
			return p + a.str(name)
		}
	}
	return key
}

// hashKeys carry the hash of a pod template: kept, so that the
// ReplicaSet's name and selector and its pods' labels still agree, except
// where the value is a StatefulSet's revision name (<statefulset>-<hash>).
var hashKeys = map[string]bool{"pod-template-hash": true, "controller-revision-hash": true}

var (
	numberRE = regexp.MustCompile(`^[+-]?[0-9]+(\.[0-9]+)?$|^[0-9]+(,[0-9]+)+$`)
	// durationRE is a Go duration (kubesim.io/run-duration: 1h).
	durationRE = regexp.MustCompile(`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`)
	uuidRE     = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
)

// namesNothing reports values that cannot name anything of the source:
// empty, numbers (a Deployment's revision), booleans (safe-to-evict),
// durations (the simulator's kubesim.io/run-duration), timestamps
// (restartedAt) and UIDs (random; source-uid must survive for the
// importer). Controllers read some of these, so they must not change.
func namesNothing(s string) bool {
	if s == "" || numberRE.MatchString(s) || durationRE.MatchString(s) || uuidRE.MatchString(s) {
		return true
	}
	if _, err := strconv.ParseBool(s); err == nil {
		return true
	}
	_, err := time.Parse(time.RFC3339, s)
	return err == nil
}

// image maps a container image reference: the repository (registry and
// path) becomes a token; a tag that is a plain version number or "latest"
// is kept (it says nothing about the source and keeps upgrades legible),
// any other tag is mapped; a digest is replaced by a keyed digest of the
// same form. Equal images stay equal, different ones different.
func (a *Anonymizer) image(ref string) string {
	if ref == "" {
		return ref
	}
	name, digest, hasDigest := strings.Cut(ref, "@")
	tag := ""
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, tag = name[:i], name[i+1:]
	}
	out := a.token(name)
	if tag != "" {
		if !versionTagRE.MatchString(tag) {
			tag = a.token(tag)
		}
		out += ":" + tag
	}
	if hasDigest {
		mac := hmac.New(sha256.New, a.key)
		mac.Write([]byte("kubesim-anonymize/digest\x00" + digest))
		out += "@sha256:" + hex.EncodeToString(mac.Sum(nil))
	}
	return out
}

var versionTagRE = regexp.MustCompile(`^(latest|v?[0-9]+(\.[0-9]+){0,3})$`)
