package memplan

import (
	"github.com/mathrl/mathrl/gomlx_trainer/layout"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// recipeNames name the recipe's keys, with their flags, in the errors of
// the layout checks.
var recipeNames = layout.Names{Prefix: "memplan:", Devices: "num_devices (--devices)", Sharding: "sharding (--sharding)"}

// CheckDevices reports whether the recipe's devices and sharding can run a
// step of a model of shape cfg under rules r, as grpo.Learner splits it
// (the layout package's checks): the rows of every micro-batch split over
// the devices (those packed by max_tokens_per_micro_batch padded with empty
// rows to do so), and under fsdp every weight split along its
// layout.FSDPAxis. The error names the recipe key and its flag, the value,
// and what would work.
func (rc Recipe) CheckDevices(cfg qwen3.Config, r Rules) error {
	n := rc.devices()
	if rc.Sharding != "" {
		if err := layout.CheckMode(recipeNames, rc.Sharding); err != nil {
			return err
		}
	}
	if err := layout.CheckSpread(recipeNames, rc.Sharding, n); err != nil {
		return err
	}
	if r == CPU {
		if err := layout.CheckOneDevice(recipeNames, n, "under the cpu rules (the pure Go backend)", "--rules xla"); err != nil {
			return err
		}
	}
	if err := layout.CheckMicroBatch(recipeNames, "micro_batch_size (--micro-batch-size)", rc.Rows(), rc.MaxTokens > 0, n); err != nil {
		return err
	}
	if !rc.fsdp() {
		return nil
	}
	var vars []layout.Variable
	for _, t := range cfg.Tensors() {
		vars = append(vars, layout.Variable{Name: t.Name, Dims: t.Shape})
	}
	return layout.CheckFSDP(recipeNames, n, vars)
}
