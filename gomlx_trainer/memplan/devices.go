package memplan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mathrl/mathrl/gomlx_trainer/grpo"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// CheckDevices reports whether the recipe's devices and sharding can run a
// step of a model of shape cfg under rules r, as grpo.Learner splits it: the
// rows of every micro-batch split over the devices (those packed by
// max_tokens_per_micro_batch padded with empty rows to do so), and under fsdp every
// weight split along its largest axis (the first of equals). The error names
// the recipe key and its flag, the value, and what would work.
func (rc Recipe) CheckDevices(cfg qwen3.Config, r Rules) error {
	n := rc.devices()
	switch {
	case rc.Sharding != "" && !slices.Contains(grpo.Shardings(), rc.Sharding):
		return fmt.Errorf("memplan: sharding (--sharding) %q: want one of %s", rc.Sharding, strings.Join(grpo.Shardings(), ", "))
	case n == 1:
		return nil
	case rc.Sharding != grpo.ShardData && rc.Sharding != grpo.ShardFSDP:
		return fmt.Errorf("memplan: sharding (--sharding) %q runs on one device, but num_devices (--devices) is %d; use %s or %s, or --devices 1",
			rc.Sharding, n, grpo.ShardData, grpo.ShardFSDP)
	case r == CPU:
		return fmt.Errorf("memplan: num_devices (--devices) %d under the cpu rules: the pure Go backend has one device; use --rules xla, or --devices 1", n)
	case rc.MaxTokens == 0 && rc.Rows()%n != 0: // packed micro-batches are padded to split (grpo.Config's validateDevices)
		return fmt.Errorf("memplan: micro_batch_size (--micro-batch-size) %d: the rows of a micro-batch do not split over num_devices (--devices) %d; "+
			"want a multiple of %d", rc.Rows(), n, n)
	case rc.fsdp():
		return checkFSDPAxes(cfg, n)
	}
	return nil
}

// checkFSDPAxes reports whether n divides every weight's largest axis.
func checkFSDPAxes(cfg qwen3.Config, n int) error {
	var shapes [][]int
	for _, t := range cfg.Tensors() {
		shapes = append(shapes, t.Shape)
	}
	for _, t := range cfg.Tensors() {
		if t.Shape[grpo.FSDPAxis(t.Shape)]%n != 0 {
			var divisors []string
			for _, d := range grpo.FSDPDeviceCounts(shapes) {
				if d > 1 {
					divisors = append(divisors, fmt.Sprint(d))
				}
			}
			fix := "no count above 1 divides them all"
			if len(divisors) > 0 {
				fix = "use one of " + strings.Join(divisors, ", ")
			}
			return fmt.Errorf("memplan: num_devices (--devices) %d with sharding fsdp: %s %v does not split along its largest axis; "+
				"--devices must divide every weight's largest axis (%s), or use --sharding %s", n, t.Name, t.Shape, fix, grpo.ShardData)
		}
	}
	return nil
}
