package bench

import (
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"

	"github.com/mathrl/mathrl/gomlx_trainer/gomlxfix"
)

// Roofline is what the machine can do at best, the limits a bench figure is
// read against: the copy bandwidth for decoding (memory-bound) and the matrix
// product peak of the compute dtype for the training step and the prefill
// (compute-bound).
type Roofline struct {
	// Source says where the limits come from: "measured" (MeasureRoofline)
	// or a datasheet (a name of NamedRooflines, or "given").
	Source string `json:"source"`
	// CopyBytesPerS is the copy bandwidth: bytes read plus written per second.
	CopyBytesPerS float64 `json:"copy_bytes_per_s"`
	CopyThreads   int     `json:"copy_threads,omitempty"`      // threads of the measured copy
	CopyBuffer    int64   `json:"copy_buffer_bytes,omitempty"` // size of each of its two buffers
	// Matmuls are the matrix product rates, one per dtype and per place it
	// was measured (a GoMLX backend, TorchName) or the datasheet's; Peak takes
	// the highest.
	Matmuls []Matmul `json:"matmuls"`
}

// Matmul is the best rate of a square matrix product [n, n] x [n, n] (2n³
// FLOPs) in one dtype.
type Matmul struct {
	On        string  `json:"on"`          // the backend kind, TorchName, or the datasheet's device
	DType     string  `json:"dtype"`       // float32 or bfloat16
	N         int     `json:"n,omitempty"` // side of the matrices that gave the best rate (measured only)
	FLOPsPerS float64 `json:"flops_per_s"` // best rate
}

// Peak returns the highest matmul rate of dtype (float32 or bfloat16) and
// where it was measured; 0 and "" when r has none.
func (r *Roofline) Peak(dtype string) (float64, string) {
	var best float64
	var on string
	for _, m := range r.Matmuls {
		if m.DType == dtype && m.FLOPsPerS > best {
			best, on = m.FLOPsPerS, m.On
		}
	}
	return best, on
}

// Datasheet figures of NamedRooflines, in bytes/s and FLOP/s.
const (
	h200HBM  = 4.8e12 // H200 SXM: HBM3e bandwidth, 4.8 TB/s
	h200BF16 = 989e12 // H200 SXM: dense BF16 Tensor Core (1,979 TFLOP/s is with sparsity)
	h200F32  = 67e12  // H200 SXM: FP32 (CUDA cores; a float32 product run as TF32 may exceed it)
	gbPerS   = 1e9    // --roofline-peaks' bandwidth unit
	tflopsU  = 1e12   // --roofline-peaks' matmul unit
)

// NamedRooflines are devices' datasheet limits, by the name --roofline-peaks
// takes.
var NamedRooflines = map[string]Roofline{
	"h200": datasheet("h200", h200HBM, h200F32, h200BF16),
}

// datasheet is the roofline of a device's published figures.
func datasheet(name string, bytesPerS, f32, bf16 float64) Roofline {
	return Roofline{Source: name, CopyBytesPerS: bytesPerS, Matmuls: []Matmul{
		{On: name, DType: "float32", FLOPsPerS: f32}, {On: name, DType: "bfloat16", FLOPsPerS: bf16}}}
}

// ParseRoofline reads --roofline-peaks: a name of NamedRooflines, or three
// numbers "GB/s,TFLOP/s float32,TFLOP/s bfloat16" (the memory bandwidth and
// the two matmul peaks of a datasheet), each > 0.
func ParseRoofline(spec string) (Roofline, error) {
	if r, ok := NamedRooflines[strings.ToLower(spec)]; ok {
		r.Matmuls = slices.Clone(r.Matmuls) // the caller's to change
		return r, nil
	}
	parts := strings.Split(spec, ",")
	if len(parts) != 3 {
		names := slices.Sorted(maps.Keys(NamedRooflines))
		return Roofline{}, fmt.Errorf("bench: roofline peaks %q: want a device (%s) or GB/s,f32 TFLOP/s,bf16 TFLOP/s", spec,
			strings.Join(names, ", "))
	}
	var v [3]float64
	for i, p := range parts {
		x, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || !(x > 0) || math.IsInf(x, 0) {
			return Roofline{}, fmt.Errorf("bench: roofline peaks %q: %q is not a number > 0", spec, p)
		}
		v[i] = x
	}
	return datasheet("given", v[0]*gbPerS, v[1]*tflopsU, v[2]*tflopsU), nil
}

// fraction is achieved / limit, or 0 when either is unknown (not > 0).
func fraction(achieved, limit float64) float64 {
	if !(achieved > 0) || !(limit > 0) {
		return 0
	}
	return achieved / limit
}

// RooflineOptions says how MeasureRoofline measures.
type RooflineOptions struct {
	Threads    int   // copy threads; 0: GOMAXPROCS (the pure Go backend's and PyTorch's)
	CopyBuffer int64 // size of each copy buffer in bytes; 0: DefaultCopyBuffer()
	MatmulMax  int   // largest side of the square matrices; 0: DefaultMatmulMax
}

// withDefaults fills the zero fields of o.
func (o RooflineOptions) withDefaults() RooflineOptions {
	if o.Threads == 0 {
		o.Threads = runtime.GOMAXPROCS(0)
	}
	if o.CopyBuffer == 0 {
		o.CopyBuffer = DefaultCopyBuffer()
	}
	if o.MatmulMax == 0 {
		o.MatmulMax = DefaultMatmulMax
	}
	return o
}

// DefaultMatmulMax is the largest matmul MeasureRoofline tries by default: a
// product of 2048² matrices (17 GFLOP) is past the size where a CPU's or a
// GPU's GEMM kernels reach their steady rate, yet takes a fraction of a second
// on two cores.
const DefaultMatmulMax = 2048

// Timing rules of MeasureMatmul (and of scripts/bench/torch_qwen3.py's
// --matmul-peak, which follows them).
const (
	matmulFirst   = 256                    // first side tried; doubled while products are quick
	matmulLong    = 100 * time.Millisecond // a product this long is timed well enough: no larger size
	matmulRepeats = 3                      // timed products per size, after one that compiles
	copyPasses    = 4                      // timed copies, after the one that faults the pages in
	copyLeast     = 256 * mib              // smallest copy buffer
	mib           = 1 << 20                // a mebibyte
)

// DefaultCopyBuffer is the size of each copy buffer: the largest cache the CPU
// reports, and at least 256 MiB, so that the two buffers together are at least
// twice the last-level cache and the copy runs from memory.
func DefaultCopyBuffer() int64 {
	return max(copyLeast, lastLevelCache())
}

// lastLevelCache is the largest CPU cache Linux reports
// (/sys/devices/system/cpu/cpu0/cache/index*/size), 0 where it reports none.
func lastLevelCache() int64 {
	files, _ := filepath.Glob("/sys/devices/system/cpu/cpu0/cache/index*/size")
	var most int64
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if n, err := parseCacheSize(strings.TrimSpace(string(data))); err == nil {
			most = max(most, n)
		}
	}
	return most
}

// parseCacheSize reads a cache size as sysfs writes it: "491520K", "4M", "512"
// (K and M are binary: KiB, MiB).
func parseCacheSize(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "G"):
		mult, s = 1<<30, strings.TrimSuffix(s, "G")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bench: cache size %q: want a count of bytes, K, M or G", s)
	}
	return n * mult, nil
}

// now is the clock MeasureCopy and MeasureMatmul time their passes and
// products with (a test replaces it with a clock it drives).
var now = time.Now

// MeasureCopy returns the copy bandwidth of threads goroutines, each copying
// its contiguous part of a buffer of size bytes into another (STREAM's Copy
// kernel, a[i] = b[i], with Go's copy), in bytes read plus written per second
// as STREAM counts them (2·size per pass): the best of copyPasses passes, after
// one that faults the destination's pages in. On amd64 Go's copy writes parts
// over 1 MiB with non-temporal stores, so the destination is not read first
// and the two bytes counted are the two moved.
func MeasureCopy(threads int, size int64) float64 {
	threads = max(threads, 1)
	src, dst := make([]byte, size), make([]byte, size)
	for i := range src {
		src[i] = byte(i)
	}
	pass := func() time.Duration {
		t0 := now()
		var wg sync.WaitGroup
		part := (len(src) + threads - 1) / threads
		for lo := 0; lo < len(src); lo += part {
			hi := min(lo+part, len(src))
			wg.Go(func() { copy(dst[lo:hi], src[lo:hi]) })
		}
		wg.Wait()
		return now().Sub(t0)
	}
	pass()
	best := time.Duration(math.MaxInt64)
	for range copyPasses {
		best = min(best, pass())
	}
	runtime.KeepAlive(dst)
	return 2 * float64(size) / best.Seconds()
}

// MeasureMatmul returns the best rate of b's matrix product in dtype, as the
// model's graphs build it (gomlxfix.DotGeneralMatmul, [n, k] x [k, n]), summed
// to a scalar so that only 4 bytes come back. Sides double from 256 while a
// product takes under 100 ms, up to maxN; at each side one product compiles
// and three are timed. The inputs stay on the device between calls.
func MeasureMatmul(b compute.Backend, dtype dtypes.DType, maxN int) (Matmul, error) {
	name, err := dtypeName(dtype)
	if err != nil {
		return Matmul{}, err
	}
	exec, err := graph.NewExec(b, func(x, y *graph.Node) *graph.Node {
		return graph.ReduceAllSum(gomlxfix.DotGeneralMatmul(x, []int{1}, nil, y, []int{0}, nil))
	})
	if err != nil {
		return Matmul{}, fmt.Errorf("bench: matmul: %w", err)
	}
	defer exec.Finalize()
	best := Matmul{DType: name}
	for n := min(matmulFirst, maxN); n <= maxN; n *= 2 {
		x, y := matrix([2]int{n, n}, dtype, 1), matrix([2]int{n, n}, dtype, 2)
		fastest, err := fastestCall(exec, x, y)
		x.FinalizeAll()
		y.FinalizeAll()
		if err != nil {
			return best, fmt.Errorf("bench: matmul %s %d: %w", name, n, err)
		}
		if r := 2 * math.Pow(float64(n), 3) / fastest.Seconds(); r > best.FLOPsPerS {
			best.N, best.FLOPsPerS = n, r
		}
		if fastest >= matmulLong {
			break
		}
	}
	return best, nil
}

// MeasureRoofline measures the machine's limits: the copy bandwidth with
// opts.Threads threads, and the float32 and bfloat16 matmul peaks on every
// backend of sides. Progress goes to log.
func MeasureRoofline(sides []GoMLXSide, opts RooflineOptions, log io.Writer) (Roofline, error) {
	opts = opts.withDefaults()
	switch {
	case opts.Threads < 1:
		return Roofline{}, fmt.Errorf("bench: roofline: threads %d, want >= 1", opts.Threads)
	case opts.CopyBuffer < 1:
		return Roofline{}, fmt.Errorf("bench: roofline: copy buffer %d bytes, want >= 1", opts.CopyBuffer)
	case opts.MatmulMax < 1:
		return Roofline{}, fmt.Errorf("bench: roofline: matmul size %d, want >= 1", opts.MatmulMax)
	}
	r := Roofline{Source: "measured", CopyThreads: opts.Threads, CopyBuffer: opts.CopyBuffer}
	r.CopyBytesPerS = MeasureCopy(opts.Threads, opts.CopyBuffer)
	runtime.GC() // give the buffers back before the models load
	fmt.Fprintf(log, "roofline: copy %s, %d threads, 2 buffers of %d MiB\n", rate(r.CopyBytesPerS, "B"), opts.Threads,
		opts.CopyBuffer/mib)
	for _, s := range sides {
		for _, dt := range []dtypes.DType{dtypes.Float32, dtypes.BFloat16} {
			m, err := MeasureMatmul(s.Backend, dt, opts.MatmulMax)
			if err != nil {
				return r, fmt.Errorf("%s: %w", s.Name, err)
			}
			m.On = s.Name
			r.Matmuls = append(r.Matmuls, m)
			fmt.Fprintf(log, "roofline: %s %s matmul %s at n %d\n", s.Name, m.DType, rate(m.FLOPsPerS, "FLOP"), m.N)
		}
	}
	return r, nil
}

// WriteText writes r in two lines: the copy bandwidth, then every matmul rate
// by dtype, the peak first.
func (r *Roofline) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "roofline (%s): copy bandwidth %s", r.Source, rate(r.CopyBytesPerS, "B"))
	if r.CopyThreads > 0 {
		fmt.Fprintf(&b, " (%d threads, 2 buffers of %d MiB)", r.CopyThreads, r.CopyBuffer/mib)
	}
	var parts []string
	for _, dt := range []string{"float32", "bfloat16"} {
		var sides []string
		for _, m := range r.sorted(dt) {
			side := m.On + " " + rate(m.FLOPsPerS, "FLOP")
			if m.N > 0 {
				side += fmt.Sprintf(" (n %d)", m.N)
			}
			sides = append(sides, side)
		}
		if len(sides) > 0 {
			parts = append(parts, dt+" "+strings.Join(sides, ", "))
		}
	}
	fmt.Fprintf(&b, "\nroofline matmul peaks: %s\n", strings.Join(parts, "; "))
	_, err := io.WriteString(w, b.String())
	return err
}

// sorted is r's matmuls of dtype, fastest first.
func (r *Roofline) sorted(dtype string) []Matmul {
	var ms []Matmul
	for _, m := range r.Matmuls {
		if m.DType == dtype {
			ms = append(ms, m)
		}
	}
	slices.SortStableFunc(ms, func(a, b Matmul) int {
		switch {
		case a.FLOPsPerS > b.FLOPsPerS:
			return -1
		case a.FLOPsPerS < b.FLOPsPerS:
			return 1
		}
		return 0
	})
	return ms
}

// rate formats v, a rate per second of unit, with an SI prefix ("85.3
// GFLOP/s", "4.52 GB/s"); "-" when it was not measured.
func rate(v float64, unit string) string {
	if !(v > 0) {
		return "-"
	}
	prefix, scale := "", 1.0
	for _, p := range []struct {
		s string
		f float64
	}{{"P", 1e15}, {"T", 1e12}, {"G", 1e9}, {"M", 1e6}, {"k", 1e3}} {
		if v >= p.f {
			prefix, scale = p.s, p.f
			break
		}
	}
	x := v / scale
	prec := 2
	switch {
	case x >= 100:
		prec = 0
	case x >= 10:
		prec = 1
	}
	return fmt.Sprintf("%.*f %s%s/s", prec, x, prefix, unit)
}

// percent formats a fraction as "31.2%" (under 0.1%, two digits: "0.0012%"),
// "-" when it is unknown.
func percent(f float64) string {
	switch {
	case !(f > 0):
		return "-"
	case f < 1e-3:
		return fmt.Sprintf("%.2g%%", 100*f)
	}
	return fmt.Sprintf("%.1f%%", 100*f)
}
