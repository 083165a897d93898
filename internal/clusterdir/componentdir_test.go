package clusterdir

import "testing"

// A component given only its kubeconfig finds its cluster's directory.
func TestOfComponentKubeconfig(t *testing.T) {
	d := For("/home/u/.kubesim", "elastic")
	if got := OfComponentKubeconfig(d.ComponentKubeconfig("karpenter")); got != d {
		t.Errorf("OfComponentKubeconfig(%q) = %+v, want %+v", d.ComponentKubeconfig("karpenter"), got, d)
	}
}
