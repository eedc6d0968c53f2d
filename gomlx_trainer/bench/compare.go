package bench

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/gomlx/compute"

	"github.com/mathrl/mathrl/gomlx_trainer/backend"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// TorchName is the name of the PyTorch baseline's side in a Comparison.
const TorchName = "torch"

// Side is one column of a comparison: a GoMLX backend or the PyTorch baseline.
type Side struct {
	Name    string `json:"name"`    // the backend kind (cpu, xla-cpu, ...) or TorchName
	Label   string `json:"label"`   // what ran, in words
	Threads int    `json:"threads"` // compute threads it had
	Result
}

// Ratio compares the step times of two sides: Over's time divided by Of's,
// so that above 1 Of is the faster. A zero field was not measured.
type Ratio struct {
	Of      string  `json:"of"`
	Over    string  `json:"over"`
	Train   float64 `json:"train,omitempty"`   // training step
	Decode  float64 `json:"decode,omitempty"`  // decode step
	Prefill float64 `json:"prefill,omitempty"` // prefill
}

// Comparison is what Compare measured: the sides in order, then the ratio of
// every side over every later one, and the roofline every side's fractions are
// of (nil: none).
type Comparison struct {
	Sides    []Side    `json:"sides"`
	Ratios   []Ratio   `json:"ratios"`
	Roofline *Roofline `json:"roofline,omitempty"`
}

// GoMLXSide is a GoMLX backend for Compare to measure.
type GoMLXSide struct {
	Name    string // its kind (backend.CPU, backend.XLACPU, ...), for the report
	Backend compute.Backend
}

// CompareOptions says what Compare measures.
type CompareOptions struct {
	Bench    Options
	Backends []GoMLXSide // measured in order, each on a model of its own
	// NewModel returns the model to measure (the same config, dtype and
	// weights at every call): the training step changes the weights it is
	// given, so every backend gets a fresh one.
	NewModel func() (*qwen3.Model, error)
	Torch    *TorchOptions // the PyTorch baseline, measured last; nil for none
	// Roofline, when set, measures the roofline before the benches (on every
	// backend, and in the PyTorch baseline's run its own matmul peaks, up to
	// the same size) and replaces Bench.Roofline with it.
	Roofline *RooflineOptions
}

// SetThreads makes the GoMLX pure Go backend compute on n threads (GOMAXPROCS)
// and returns the number it had. XLA's CPU backend sizes its own thread pool
// from the CPUs the process may run on (limit it with taskset).
func SetThreads(n int) (int, error) {
	if n < 1 {
		return 0, fmt.Errorf("bench: threads %d, want >= 1", n)
	}
	return runtime.GOMAXPROCS(n), nil
}

// backendThreads is how many compute threads a GoMLX backend of kind has.
func backendThreads(kind string) int {
	if kind == backend.XLACPU || kind == backend.CUDA {
		return runtime.NumCPU()
	}
	return runtime.GOMAXPROCS(0)
}

// Compare measures opts.Bench on every backend of opts.Backends and then on the
// PyTorch baseline (with the Go side's thread count unless opts.Torch.Threads
// says otherwise), writing progress to log. With opts.Roofline or
// opts.Bench.Roofline, every side's rates are read against the roofline, with
// torch's matmul peaks (when opts.Torch.MatmulMax asks for them) added to its
// own.
func Compare(ctx context.Context, opts CompareOptions, log io.Writer) (Comparison, error) {
	var c Comparison
	if err := opts.prepare(log); err != nil {
		return c, err
	}
	var cfg qwen3.Config
	var m *qwen3.Model
	var torchMatmuls []Matmul
	for _, s := range opts.Backends {
		var err error
		if m, err = opts.NewModel(); err != nil {
			return c, err
		}
		fmt.Fprintf(log, "bench: mathrl on %s\n", s.Name)
		res, err := Run(s.Backend, m, opts.Bench, log)
		if err != nil {
			return c, fmt.Errorf("%s: %w", s.Name, err)
		}
		c.Sides = append(c.Sides, Side{Name: s.Name, Label: "mathrl on " + backend.Describe(s.Backend),
			Threads: backendThreads(s.Name), Result: res})
		cfg = m.Config
		runtime.GC() // the next side's model and optimizer state take as much memory again
	}
	if opts.Torch != nil {
		if m == nil {
			var err error
			if m, err = opts.NewModel(); err != nil {
				return c, err
			}
			cfg = m.Config
		}
		t := *opts.Torch
		if t.Threads == 0 {
			t.Threads = runtime.GOMAXPROCS(0)
		}
		fmt.Fprintf(log, "bench: PyTorch baseline, %d threads\n", t.Threads)
		r, err := RunTorch(ctx, cfg, m.DType, opts.Bench, t, log)
		if err != nil {
			return c, err
		}
		label := fmt.Sprintf("PyTorch %s eager, transformers %s, attention %s, %s", r.Torch, r.Transformers, r.Attention, r.DType)
		c.Sides = append(c.Sides, Side{Name: TorchName, Label: label, Threads: r.Threads, Result: r.Result})
		torchMatmuls = r.Matmuls
	}
	c.Ratios = ratios(c.Sides)
	if opts.Bench.Roofline != nil && m != nil {
		dt, err := dtypeName(m.DType)
		if err != nil {
			return c, err
		}
		c.Roofline = c.applyRoofline(*opts.Bench.Roofline, torchMatmuls, dt)
	}
	return c, nil
}

// prepare finds the PyTorch baseline's python and script, before the long
// GoMLX runs, and with opts.Roofline measures the roofline into
// opts.Bench.Roofline, asking torch for its matmul peaks up to the same size.
func (opts *CompareOptions) prepare(log io.Writer) error {
	if opts.Torch != nil {
		t, err := opts.Torch.resolve()
		if err != nil {
			return err
		}
		opts.Torch = &t
	}
	if opts.Roofline == nil {
		return nil
	}
	ro := opts.Roofline.withDefaults()
	roof, err := MeasureRoofline(opts.Backends, ro, log)
	if err != nil {
		return err
	}
	opts.Bench.Roofline = &roof
	if opts.Torch != nil {
		opts.Torch.MatmulMax = ro.MatmulMax
	}
	return nil
}

// applyRoofline adds torch's matmul peaks to roof and reads every side's rates
// against it; the sides share the comparison's roofline and keep none of
// their own. It returns the roofline.
func (c *Comparison) applyRoofline(roof Roofline, torchMatmuls []Matmul, dtype string) *Roofline {
	roof.Matmuls = append(slices.Clone(roof.Matmuls), torchMatmuls...)
	for i := range c.Sides {
		c.Sides[i].ApplyRoofline(&roof, dtype)
		c.Sides[i].Roofline = nil
	}
	return &roof
}

// ratios compares every side with every later one.
func ratios(sides []Side) []Ratio {
	var out []Ratio
	for i, a := range sides {
		for _, b := range sides[i+1:] {
			out = append(out, Ratio{Of: a.Name, Over: b.Name, Train: ratio(b.TrainStepMS, a.TrainStepMS),
				Decode: ratio(b.DecodeStepMS, a.DecodeStepMS), Prefill: ratio(b.PrefillMS, a.PrefillMS)})
		}
	}
	return out
}

// ratio is num/den, or 0 when either was not measured.
func ratio(num, den float64) float64 {
	if num <= 0 || den <= 0 {
		return 0
	}
	return num / den
}

// WriteText writes c as a table, one row a side, then its ratios and what each
// side ran.
func (c Comparison) WriteText(w io.Writer) error {
	var b strings.Builder
	if len(c.Sides) > 0 {
		b.WriteString(c.shapes())
	}
	if c.Roofline != nil {
		if err := c.Roofline.WriteText(&b); err != nil {
			return err
		}
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tthreads\ttrain ms/step\ttrain tokens/s\tfirst step s\tprefill ms\tdecode ms/step\tdecode tokens/s\twarm-up s\t")
	for _, s := range c.Sides {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", s.Name, s.Threads,
			num(s.TrainStepMS, 1), num(s.TrainTokensPerS, 0), num(s.TrainCompileS, 1),
			num(s.PrefillMS, 1), num(s.DecodeStepMS, 2), num(s.DecodeTokensPerS, 0), num(s.DecodeCompileS, 1))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := c.writeRates(&b); err != nil {
		return err
	}
	for _, r := range c.Ratios {
		fmt.Fprintf(&b, "%s vs %s (%s's step time / %s's; > 1: %s is faster): train %s, decode %s, prefill %s\n",
			r.Of, r.Over, r.Over, r.Of, r.Of, times(r.Train), times(r.Decode), times(r.Prefill))
	}
	for _, s := range c.Sides {
		fmt.Fprintf(&b, "%s: %s\n", s.Name, s.Label)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeRates writes the table of each side's rates and, against a roofline,
// their fractions of it; nothing when no side has a rate.
func (c Comparison) writeRates(w io.Writer) error {
	if !slices.ContainsFunc(c.Sides, func(s Side) bool {
		return s.TrainFLOPsPerS > 0 || s.PrefillFLOPsPerS > 0 || s.DecodeBytesPerS > 0
	}) {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\ttrain FLOP/s\tof matmul peak\tprefill FLOP/s\tof matmul peak\tdecode bytes/s\tof copy bandwidth\tdecode FLOP/s\tof matmul peak\t")
	for _, s := range c.Sides {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", s.Name, rate(s.TrainFLOPsPerS, "FLOP"), percent(s.TrainMFU),
			rate(s.PrefillFLOPsPerS, "FLOP"), percent(s.PrefillMFU), rate(s.DecodeBytesPerS, "B"), percent(s.DecodeMBU),
			rate(s.DecodeFLOPsPerS, "FLOP"), percent(s.DecodeMFU))
	}
	return tw.Flush()
}

// shapes is the line of sizes, of the parts that were measured.
func (c Comparison) shapes() string {
	r := c.Sides[0].Result
	parts := []string{fmt.Sprintf("params %.3g", float64(r.Params))}
	if r.TrainStepMS > 0 {
		parts = append(parts, fmt.Sprintf("train: batch %d x %d tokens", r.Batch, r.SeqLen))
	}
	if r.DecodeStepMS > 0 {
		parts = append(parts, fmt.Sprintf("decode: batch %d, prompts of %d tokens, %d new tokens", r.DecodeBatch, r.PromptLen, r.NewTokens))
	}
	return strings.Join(parts, "; ") + "\n"
}

// num formats a measurement with prec decimals, "-" when it was not measured.
func num(v float64, prec int) string {
	if v <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.*f", prec, v)
}

// times formats a ratio as "1.23x", "-" when it was not measured.
func times(v float64) string {
	if v <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", v)
}
