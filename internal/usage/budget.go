package usage

import (
	"errors"
	"fmt"
	"math"

	"github.com/kubesim/kubesim/internal/kwokcel"
)

// Budgets of CEL cost (cel-go's units, about one an operation) for one
// read of the metrics: one kubectl top, one HPA's pods, one Usage() call of
// a Metric. One expression is held to kwokcel.UsageCostLimit (10,000);
// these hold the many a read evaluates, so a costly usage object cannot
// make everyone's metrics slow:
//   - objectReadBudget, each usage object's: the cpu and memory of 10,000
//     pods at 50 units each (KWOK's own expressions cost 4 to 5), and
//     0.1–0.25 s at the 4–10 million units a second cel-go runs here;
//   - totalReadBudget, all objects' together: four at full stretch.
//
// Past its budget an object's expressions are not evaluated for the rest
// of the read: those pods have no metric (the HPA goes on with the
// others) and the object gets a Warning.
const (
	objectReadBudget = 1_000_000
	totalReadBudget  = 4 * objectReadBudget
)

// errBudgetSpent marks a usage not evaluated because its read's budget
// was spent.
var errBudgetSpent = errors.New("not evaluated")

// readBudget is what one read has left to spend. nil: no bound. A read is
// served by one goroutine.
type readBudget struct {
	total    uint64
	byObject map[Ref]uint64
}

func newReadBudget() *readBudget { return &readBudget{byObject: map[Ref]uint64{}} }

// allow says why ref may evaluate no more expressions in this read, if so.
func (b *readBudget) allow(ref Ref) error {
	switch {
	case b == nil:
		return nil
	case b.byObject[ref] >= objectReadBudget:
		return fmt.Errorf("%w: its expressions ran past their budget of %d for one read of the metrics, so the rest of its pods have no metric; make them cheaper", errBudgetSpent, objectReadBudget)
	case b.total >= totalReadBudget:
		return fmt.Errorf("%w: the usage expressions together ran past the budget of %d for one read of the metrics, so the rest of the pods have no metric; make them cheaper", errBudgetSpent, totalReadBudget)
	}
	return nil
}

func (b *readBudget) spend(ref Ref, cost uint64) {
	if b != nil {
		b.byObject[ref] += cost
		b.total += cost
	}
}

// ofTheObject: err says something of the usage object, not of one pod, and
// is reported without a pod's name, so one Warning says it for all.
func ofTheObject(err error) bool {
	return errors.Is(err, errBudgetSpent) || errors.Is(err, kwokcel.ErrOverBudget)
}

// int64Range is where an int64 ends, which metrics.k8s.io carries usage in
// (nanocores, bytes) and custom metrics in (thousandths).
const int64Range = 1 << 63

// fits says whether metrics.k8s.io can carry a usage of res; more would
// wrap round to a negative one. If not, the error says what it can carry.
func fits(res string, v float64) error {
	scale, unit := 1.0, ""
	switch res {
	case "cpu":
		scale, unit = 1e9, " cores"
	case "memory":
		unit = " bytes"
	default:
		return nil // served by no API
	}
	if math.Round(v*scale) < int64Range {
		return nil
	}
	return fmt.Errorf("%v is more than metrics.k8s.io can carry (%.4g%s at most)", v, math.MaxInt64/scale, unit)
}
