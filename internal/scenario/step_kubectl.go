package scenario

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/kubesim/kubesim/apis/kubesim/v1alpha1"
)

func init() {
	stepKinds.register(&stepKind{
		name: "kubectl",
		validate: func(s *v1alpha1.Step, _ clusterNames) error {
			if len(s.Kubectl) == 0 {
				return fmt.Errorf("give kubectl's arguments, such as get pods -o wide")
			}
			return nil
		},
		do: func(x *stepRun) (string, error) {
			out, err := x.t.kubectl(x.ctx, x.r.o.Provider.Home, x.step.Kubectl)
			x.result.Output = out // printed under the step's line
			return "", err
		},
	})
}

// kubectlWaitDelay is how long a killed kubectl's output may stay open.
const kubectlWaitDelay = 2 * time.Second

// kubectl runs kubesim's embedded kubectl in a child process (kubectl
// exits its process on an error).
func (t *target) kubectl(ctx context.Context, home string, args []string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, self, append([]string{"kubectl", "--name", t.name}, args...)...)
	cmd.Env = append(os.Environ(), "KUBESIM_HOME="+home)
	// At the step's timeout the child is killed; what it started (a
	// plugin) may hold its output open, so stop waiting for that soon.
	cmd.WaitDelay = kubectlWaitDelay
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %v: %s", strings.Join(args, " "), err, oneLine(string(out)))
	}
	return string(out), nil
}
