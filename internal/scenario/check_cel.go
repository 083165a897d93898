package scenario

import (
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

func init() {
	checkKinds.register(&checkKind{
		name: "cel",
		validate: func(a *v1alpha1.Assertion) error {
			if _, err := compileCEL(a.CEL); err != nil {
				return fmt.Errorf("cel: %s", oneLine(err.Error()))
			}
			return nil
		},
		describe: func(a *v1alpha1.Assertion) string { return "cel: " + a.CEL },
		evaluate: func(v *view, a *v1alpha1.Assertion) (bool, string, string) { return v.cel(a.CEL) },
	})
}

// celEnv is made once: building it is the slow part.
var celEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(
		cel.Variable("pods", cel.ListType(cel.DynType)),
		cel.Variable("nodes", cel.ListType(cel.DynType)),
		cel.Variable("pdbs", cel.ListType(cel.DynType)),
		cel.Variable("deployments", cel.ListType(cel.DynType)),
		cel.Variable("evictions", cel.MapType(cel.StringType, cel.DynType)),
	)
})

// compileCEL checks a boolean CEL expression over the cluster's objects:
// pods, nodes, pdbs, deployments (lists of objects as in the API) and
// evictions ({made: [...], refused: [...]}, of the last disruption).
func compileCEL(expr string) (cel.Program, error) {
	env, err := celEnv()
	if err != nil {
		return nil, err
	}
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	if ast.OutputType() != cel.BoolType && ast.OutputType() != cel.DynType {
		return nil, fmt.Errorf("the expression gives %s; it must give true or false", ast.OutputType())
	}
	return env.Program(ast)
}

func (v *view) cel(expr string) (bool, string, string) {
	prg, err := compileCEL(expr)
	if err != nil {
		return false, "", err.Error()
	}
	pdbs, err := v.t.client.PolicyV1().PodDisruptionBudgets("").List(v.ctx, metav1.ListOptions{})
	if err != nil {
		return false, "", err.Error()
	}
	deps, err := v.t.client.AppsV1().Deployments("").List(v.ctx, metav1.ListOptions{})
	if err != nil {
		return false, "", err.Error()
	}
	ev := map[string]any{"made": []any{}, "refused": []any{}}
	if d := v.t.last; d != nil {
		ev["made"], ev["refused"] = toAny(d.Made), toAny(d.Refused)
	}
	out, _, err := prg.Eval(map[string]any{
		"pods":        toObjects(v.pods),
		"nodes":       toObjects(v.nodes),
		"pdbs":        toObjects(pdbs.Items),
		"deployments": toObjects(deps.Items),
		"evictions":   ev,
	})
	if err != nil {
		return false, "true", "error: " + err.Error()
	}
	b, ok := out.Value().(bool)
	return ok && b, "true", fmt.Sprint(out.Value())
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

func toObjects[T corev1.Pod | corev1.Node | policyv1.PodDisruptionBudget | appsv1.Deployment](items []T) []any {
	out := make([]any, 0, len(items))
	for i := range items {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&items[i])
		if err == nil {
			out = append(out, m)
		}
	}
	return out
}
