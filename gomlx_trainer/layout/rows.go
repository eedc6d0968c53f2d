package layout

import "slices"

// PaddedRows is rows rounded up to a multiple of devices (0 or 1: one
// device): the rows of a batch split over them.
func PaddedRows(rows, devices int) int {
	d := max(devices, 1)
	return (rows + d - 1) / d * d
}

// RowsPerDevice is the rows each of devices holds of a batch of rows,
// padded to split (PaddedRows).
func RowsPerDevice(rows, devices int) int { return PaddedRows(rows, devices) / max(devices, 1) }

// PadRows appends pad() to a copy of rows until their count splits over
// devices (PaddedRows); rows that already split are returned as they are,
// pad uncalled. The caller's padding rows must weigh nothing.
func PadRows[T any](rows []T, devices int, pad func() T) []T {
	want := PaddedRows(len(rows), devices)
	if want == len(rows) {
		return rows
	}
	p := pad()
	out := slices.Grow(slices.Clone(rows), want-len(rows))
	for len(out) < want {
		out = append(out, p)
	}
	return out
}

// PadLength is the padded length of the sequences of a batch whose longest
// has n tokens: a multiple of 32 up to 256, then of 128, so that the graphs
// compile for few shapes.
func PadLength(n int) int {
	step := 32
	if n > 256 {
		step = 128
	}
	return (n + step - 1) / step * step
}
