package scale

import (
	_ "embed"
	"os"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubesim/kubesim/internal/manifest"
)

// DefaultManifest is the node kubesim stamps nodes from unless given a
// template: `kubesim get node-template` prints it as it is, comments and
// all, for users (and kubesimtest) to start their own from.
//
//go:embed default-node.yaml
var DefaultManifest []byte

// defaultTemplate is DefaultManifest read once; a manifest kubesim cannot
// read is a build that must not ship.
var defaultTemplate = func() *corev1.Node {
	node, err := ParseTemplate(DefaultManifest)
	if err != nil {
		panic("internal/scale/default-node.yaml: " + err.Error())
	}
	return node
}()

// DefaultTemplate is a copy of the node scale creates without a template:
// marked for simulators (kwok.x-k8s.io/node=fake), sized like a big VM.
func DefaultTemplate() *corev1.Node { return defaultTemplate.DeepCopy() }

// ReadTemplate reads the Node manifest at path; an error names the file.
func ReadTemplate(path string) (*corev1.Node, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err // an *fs.PathError names the file
	}
	node, err := ParseTemplate(data)
	if err != nil {
		return nil, manifest.InFile(path, err) // path:line: field: message
	}
	return node, nil
}

// ParseTemplate reads a Node manifest to stamp nodes from.
func ParseTemplate(data []byte) (*corev1.Node, error) {
	node := &corev1.Node{}
	if err := manifest.Decode(data, node, "v1", "Node"); err != nil {
		return nil, err
	}
	return node, nil
}
