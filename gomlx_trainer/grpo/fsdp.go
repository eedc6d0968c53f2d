package grpo

import "strconv"

// FSDPAxis is the axis sharding fsdp splits a tensor of dims along: its
// largest, the first of equals.
func FSDPAxis(dims []int) int {
	axis := 0
	for i, d := range dims {
		if d > dims[axis] {
			axis = i
		}
	}
	return axis
}

// FSDPDeviceCounts lists, in increasing order, the device counts that split
// every tensor of shapes along its FSDPAxis (scalars aside): the divisors
// of those axes' greatest common divisor, 1 included.
func FSDPDeviceCounts(shapes [][]int) []int {
	common := 0
	for _, dims := range shapes {
		if len(dims) > 0 {
			common = gcd(common, dims[FSDPAxis(dims)])
		}
	}
	var out []int
	for d := 1; d <= common; d++ {
		if common%d == 0 {
			out = append(out, d)
		}
	}
	return out
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// deviceCounts writes counts as words, for errors.
func deviceCounts(counts []int) []string {
	out := make([]string, len(counts))
	for i, n := range counts {
		out[i] = strconv.Itoa(n)
	}
	return out
}
