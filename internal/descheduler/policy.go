package descheduler

import (
	"fmt"
	"os"
	"strings"

	"k8s.io/client-go/kubernetes/fake"
)

// PolicyFields are the caller's names for ResolvePolicy's two inputs
// (flags such as --policy, or config fields such as descheduler.policy),
// so that its errors name what the user wrote.
type PolicyFields struct {
	Policy, Profiles string
}

// ResolvePolicy returns the v1alpha2 policy that a policy file or named
// profiles (one or the other) amount to, checked with the descheduler's own
// validation. Each error begins with the field at fault.
func ResolvePolicy(policyFile string, profiles []string, fields PolicyFields) ([]byte, error) {
	var data []byte
	var err error
	field := fields.Profiles
	switch {
	case policyFile != "" && len(profiles) > 0:
		return nil, fmt.Errorf("%s and %s: give one or the other", fields.Policy, fields.Profiles)
	case policyFile != "":
		field = fields.Policy + " " + policyFile
		data, err = os.ReadFile(policyFile)
	case len(profiles) > 0:
		data, err = ProfilePolicy(profiles)
	default:
		return nil, fmt.Errorf("%s or %s: required (profiles: %s)", fields.Profiles, fields.Policy, strings.Join(Profiles, ", "))
	}
	if err == nil {
		// No cluster to read yet: validation needs none.
		_, err = LoadPolicy(data, fake.NewClientset())
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	return data, nil
}
