package layout

import "fmt"

// CheckHave refuses more devices than a backend has; on names it, e.g.
// "the cuda backend".
func CheckHave(n Names, want, have int, on string) error {
	if want <= have {
		return nil
	}
	return fmt.Errorf("%s %s: %d, but %s has %d device(s); set %s at most %d", n.Prefix, n.Devices, want, on, have, n.Devices, have)
}

// CheckOneDevice refuses several devices on what has one: on names it
// (e.g. "on backend cpu"), fix what has more (e.g. "backend xla-cpu or cuda").
func CheckOneDevice(n Names, devices int, on, fix string) error {
	if devices <= 1 {
		return nil
	}
	return fmt.Errorf("%s %s: %d %s, which has one device; use %s, or %s 1", n.Prefix, n.Devices, devices, on, fix, n.Devices)
}

// CheckShardsHeld refuses fsdp on what has one device, which cannot hold
// shards: on and fix as CheckOneDevice's.
func CheckShardsHeld(n Names, mode, on, fix string) error {
	if mode != FSDP {
		return nil
	}
	return fmt.Errorf("%s %s: %q %s, whose one device cannot hold shards; use %s, or %s %s", n.Prefix, n.Sharding, mode, on, fix, n.Sharding, Replicate)
}

// CheckRows refuses rows that do not split over devices: key is the knob
// that sets them and what says what they are, e.g. "rows per micro-batch".
func CheckRows(n Names, key string, rows int, what string, devices int) error {
	if devices <= 1 || rows%devices == 0 {
		return nil
	}
	return fmt.Errorf("%s %s: %d %s do not split over %s %d; want a multiple of %d", n.Prefix, key, rows, what, n.Devices, devices, devices)
}

// CheckMicroBatch is CheckRows for the rows of a micro-batch, which a
// micro-batch packed by tokens may have in any count: those are padded to
// split (PadRows).
func CheckMicroBatch(n Names, key string, rows int, packed bool, devices int) error {
	if packed {
		return nil
	}
	return CheckRows(n, key, rows, "rows per micro-batch", devices)
}
