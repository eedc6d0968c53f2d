package bench

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// ProductSide is one side's times of a ProductComparison's products.
type ProductSide struct {
	Name    string    `json:"name"`    // the backend kind or TorchName
	Threads int       `json:"threads"` // compute threads it had
	MS      []float64 `json:"ms"`      // each product's time, in the comparison's order
}

// ProductComparison is what CompareProducts measured: the products of a
// model's steps, their times on every side, and the roofline (nil: none).
type ProductComparison struct {
	DType    string        `json:"dtype"`
	Products []Product     `json:"products"`
	Sides    []ProductSide `json:"sides"`
	Roofline *Roofline     `json:"roofline,omitempty"`
}

// CompareProducts times ModelProducts(cfg, opts.Bench) in dtype on every
// backend of opts.Backends and then in the PyTorch baseline (opts.Torch, with
// the Go side's thread count unless it says otherwise), writing progress to
// log. opts.Roofline measures the limits first, as Compare does; opts.NewModel
// is not used: a product needs no model.
func CompareProducts(ctx context.Context, cfg qwen3.Config, dtype dtypes.DType, opts CompareOptions, log io.Writer) (ProductComparison, error) {
	bo := opts.Bench.withDefaults()
	if err := bo.validate(); err != nil {
		return ProductComparison{}, err
	}
	dt, err := dtypeName(dtype)
	if err != nil {
		return ProductComparison{}, err
	}
	c := ProductComparison{DType: dt, Products: ModelProducts(cfg, bo)}
	if len(c.Products) == 0 {
		return c, fmt.Errorf("bench: products: no part to measure (train or decode)")
	}
	if err := opts.prepare(log); err != nil {
		return c, err
	}
	roof := opts.Bench.Roofline
	for _, s := range opts.Backends {
		fmt.Fprintf(log, "bench: products on %s\n", s.Name)
		ms, err := MeasureProducts(s.Backend, dtype, c.Products, log)
		if err != nil {
			return c, fmt.Errorf("%s: %w", s.Name, err)
		}
		c.Sides = append(c.Sides, ProductSide{Name: s.Name, Threads: backendThreads(s.Name), MS: ms})
		runtime.GC()
	}
	if opts.Torch != nil {
		t := *opts.Torch
		if t.Threads == 0 {
			t.Threads = runtime.GOMAXPROCS(0)
		}
		fmt.Fprintf(log, "bench: products in PyTorch, %d threads\n", t.Threads)
		r, err := RunTorchProducts(ctx, c.Products, dtype, t, log)
		if err != nil {
			return c, err
		}
		c.Sides = append(c.Sides, ProductSide{Name: TorchName, Threads: r.Threads, MS: r.MS})
		if roof != nil {
			r2 := *roof
			r2.Matmuls = append(slices.Clone(roof.Matmuls), r.Matmuls...)
			roof = &r2
		}
	}
	c.Roofline = roof
	return c, nil
}

// PartTotal is a side's time of a part's products, each counted as often as
// a step of the part runs it, and their FLOPs.
type PartTotal struct {
	Part  string
	MS    float64
	FLOPs float64
}

// Totals returns side i's total of every part, in the order the parts first
// appear.
func (c ProductComparison) Totals(i int) []PartTotal {
	var out []PartTotal
	for k, p := range c.Products {
		j := slices.IndexFunc(out, func(t PartTotal) bool { return t.Part == p.Part })
		if j < 0 {
			out = append(out, PartTotal{Part: p.Part})
			j = len(out) - 1
		}
		out[j].MS += float64(p.Count) * c.Sides[i].MS[k]
		out[j].FLOPs += float64(p.Count) * p.FLOPs()
	}
	return out
}

// ofPeak is the fraction of the dtype's matmul peak that flops in ms reach,
// or 0 without a roofline.
func (c ProductComparison) ofPeak(flops, ms float64) float64 {
	if c.Roofline == nil || !(ms > 0) {
		return 0
	}
	peak, _ := c.Roofline.Peak(c.DType)
	return fraction(flops/(ms/1000), peak)
}

// WriteText writes c as a table, a product a row: its part, weights, form
// and sizes, how often a step runs it, and every side's time and fraction of
// the matmul peak, then the first side's time over every other's; then each
// part's totals.
func (c ProductComparison) WriteText(w io.Writer) error {
	var b strings.Builder
	if c.Roofline != nil {
		if err := c.Roofline.WriteText(&b); err != nil {
			return err
		}
	}
	fmt.Fprintf(&b, "products in %s, each alone, fastest of %d calls (forms: x·wT the layer, g·w the input's gradient, gT·x the weight's)\n",
		c.DType, matmulRepeats)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"part", "weights", "form", "rows", "in", "out", "count"}
	for _, s := range c.Sides {
		head = append(head, s.Name+" ms", "of peak")
	}
	for _, s := range c.Sides[min(1, len(c.Sides)):] {
		head = append(head, c.Sides[0].Name+" vs "+s.Name)
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for k, p := range c.Products {
		row := []string{p.Part, p.Weight, p.Form, fmt.Sprint(p.Rows), fmt.Sprint(p.In), fmt.Sprint(p.Out), fmt.Sprint(p.Count)}
		for _, s := range c.Sides {
			row = append(row, num(s.MS[k], 2), percent(c.ofPeak(p.FLOPs(), s.MS[k])))
		}
		for _, s := range c.Sides[min(1, len(c.Sides)):] {
			row = append(row, times(ratio(s.MS[k], c.Sides[0].MS[k])))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for i, s := range c.Sides {
		var parts []string
		for _, t := range c.Totals(i) {
			parts = append(parts, fmt.Sprintf("%s %.1f ms (%s, %s of peak)", t.Part, t.MS,
				rate(t.FLOPs/(t.MS/1000), "FLOP"), percent(c.ofPeak(t.FLOPs, t.MS))))
		}
		fmt.Fprintf(&b, "%s, a step's products: %s\n", s.Name, strings.Join(parts, "; "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
