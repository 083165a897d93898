package component

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

// Flag is a `kubesim create cluster` flag of a cluster option: its name,
// its usage and where its value lands in the ClusterSpec. The CLI's own
// table holds the cluster's general options; a component declares the
// flags of the options it reads (Component.Flags). A Cluster file, a
// scenario's cluster and kubesimtest set the same field without one.
type Flag struct {
	Name, Usage string
	Lands       Landing
}

// Landing defines a flag on fs and returns what lays the value it was
// given over a spec.
type Landing func(fs *pflag.FlagSet, name, usage string) func(*v1alpha1.ClusterSpec) error

// At lands a flag's value, as it is, in a field of its type.
func At[T any](define func(*pflag.FlagSet, *T, string, T, string), field func(*v1alpha1.ClusterSpec) *T) Landing {
	return As(define, func(v T) (T, error) { return v, nil }, field)
}

// As lands a flag's value, converted, in a field of another type; a value
// that does not convert is an error naming the flag.
func As[F, T any](define func(*pflag.FlagSet, *F, string, F, string), convert func(F) (T, error), field func(*v1alpha1.ClusterSpec) *T) Landing {
	return func(fs *pflag.FlagSet, name, usage string) func(*v1alpha1.ClusterSpec) error {
		var value, zero F
		define(fs, &value, name, zero, usage)
		return func(s *v1alpha1.ClusterSpec) error {
			v, err := convert(value)
			if err != nil {
				return fmt.Errorf("--%s: %w", name, err)
			}
			*field(s) = v
			return nil
		}
	}
}

// DurationAt lands a duration flag in an optional duration field.
func DurationAt(field func(*v1alpha1.ClusterSpec) **metav1.Duration) Landing {
	return As((*pflag.FlagSet).DurationVar, func(d time.Duration) (*metav1.Duration, error) {
		return &metav1.Duration{Duration: d}, nil
	}, field)
}

// Pointer converts a flag's value to a pointer to it, for an optional field.
func Pointer[T any](v T) (*T, error) { return &v, nil }
