package deploy

import (
	"bytes"
	"os"
	"testing"
)

// deploy/dpdb carries a copy of the generated CRD (kustomize reads no file
// outside its directory); `make generate` keeps it in step.
func TestDPDBCRDCopyInStep(t *testing.T) {
	cp, err := os.ReadFile("dpdb/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(cp, DPDBCRD) {
		t.Error("deploy/dpdb/crd.yaml differs from deploy/crds: run make generate")
	}
}
