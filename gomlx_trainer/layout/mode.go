package layout

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/mathrl/mathrl/internal/english"
)

// The shard modes, the values of the sharding knob.
const (
	Replicate = "replicate" // the train step on one device
	Data      = "data"      // micro-batches split over the devices, variables replicated
	FSDP      = "fsdp"      // variables sharded too, each along its FSDPAxis
)

// Modes lists the shard modes.
func Modes() []string { return []string{Replicate, Data, FSDP} }

// Spreads reports whether mode spreads a step over several devices.
func Spreads(mode string) bool { return mode == Data || mode == FSDP }

// Names say how a check's errors name what they are about: what starts
// them and the knobs of the device count and the shard mode.
type Names struct {
	Prefix   string // what every error starts with, e.g. "grpo: config"
	Devices  string // the device count's knob, e.g. "num_devices (--devices)"
	Sharding string // the shard mode's knob, e.g. "sharding"
}

// CheckMode refuses a mode that is none of Modes.
func CheckMode(n Names, mode string) error {
	if slices.Contains(Modes(), mode) {
		return nil
	}
	return fmt.Errorf("%s %s: %q is not %s", n.Prefix, n.Sharding, mode, english.Or(Modes()))
}

// CheckSpread refuses a mode that runs on one device (Spreads) with more
// than one device.
func CheckSpread(n Names, mode string, devices int) error {
	if devices <= 1 || Spreads(mode) {
		return nil
	}
	return fmt.Errorf("%s %s: %q runs on one device, but %s is %d; set %s %s or %s, or %s 1",
		n.Prefix, n.Sharding, mode, n.Devices, devices, n.Sharding, Data, FSDP, n.Devices)
}

// itoas writes counts as words.
func itoas(counts []int) []string {
	out := make([]string, len(counts))
	for i, c := range counts {
		out[i] = strconv.Itoa(c)
	}
	return out
}
