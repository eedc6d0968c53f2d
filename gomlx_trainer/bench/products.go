package bench

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/dtypes/bfloat16"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"

	"github.com/mathrl/mathrl/gomlx_trainer/gomlxfix"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// The three forms of a linear layer's products, for a weight w stored as
// transformers stores it, [out, in], and rows tokens x [rows, in]:
const (
	// FormForward is the layer itself, x · wᵀ: [rows, in] by [out, in],
	// contracting in, to [rows, out].
	FormForward = "x·wT"
	// FormInputGrad is the gradient of x, g · w: [rows, out] by [out, in],
	// contracting out, to [rows, in].
	FormInputGrad = "g·w"
	// FormWeightGrad is the gradient of w, gᵀ · x: [rows, out] by
	// [rows, in], contracting the rows, to [out, in].
	FormWeightGrad = "gT·x"
)

// The parts of ModelProducts.
const (
	PartTrain        = "train"         // a training step: every weight's three forms
	PartPrefillRow   = "prefill-row"   // the sampler's prefill: one prompt at a time
	PartPrefillBatch = "prefill-batch" // every prompt in one forward, as PyTorch's generate
	PartDecode       = "decode"        // a decode step: one token of every sequence
)

// Product is one matrix product of a Qwen3 step: a weight of [Out, In] in one
// of the three forms, on Rows tokens, Count times per step of its part.
type Product struct {
	Part   string `json:"part"`   // PartTrain, PartPrefillRow, ...
	Weight string `json:"weight"` // which weights: "q", "k, v", "head", ...
	Form   string `json:"form"`   // FormForward, FormInputGrad or FormWeightGrad
	Rows   int    `json:"rows"`   // tokens multiplied
	In     int    `json:"in"`     // the weight's input width
	Out    int    `json:"out"`    // the weight's output width
	Count  int    `json:"count"`  // times a step of the part runs it
}

// FLOPs is the work of one product: 2 · rows · in · out, in every form.
func (p Product) FLOPs() float64 { return 2 * float64(p.Rows) * float64(p.In) * float64(p.Out) }

// key is what a measurement depends on: products with equal keys are timed
// once.
func (p Product) key() [4]int {
	form := map[string]int{FormForward: 0, FormInputGrad: 1, FormWeightGrad: 2}[p.Form]
	return [4]int{form, p.Rows, p.In, p.Out}
}

// operands returns the shapes of p's two operands and the axis of each that
// the product contracts.
func (p Product) operands() (lhs, rhs [2]int, lc, rc int) {
	switch p.Form {
	case FormInputGrad:
		return [2]int{p.Rows, p.Out}, [2]int{p.Out, p.In}, 1, 0
	case FormWeightGrad:
		return [2]int{p.Rows, p.Out}, [2]int{p.Rows, p.In}, 0, 0
	}
	return [2]int{p.Rows, p.In}, [2]int{p.Out, p.In}, 1, 1
}

// layerWeight is one kind of a decoder layer's weights: [out, in], perLayer
// of them.
type layerWeight struct {
	name          string
	out, in, each int
}

// layerWeights are a decoder layer's projections, those of equal shape
// together.
func layerWeights(cfg qwen3.Config) []layerWeight {
	q, kv := cfg.Heads*cfg.HeadDim, cfg.KVHeads*cfg.HeadDim
	return []layerWeight{
		{"q", q, cfg.Hidden, 1}, {"k, v", kv, cfg.Hidden, 2}, {"o", cfg.Hidden, q, 1},
		{"gate, up", cfg.Intermediate, cfg.Hidden, 2}, {"down", cfg.Hidden, cfg.Intermediate, 1},
	}
}

// ModelProducts lists the weight products of a model of cfg in the steps
// opts measures: with opts.Train, a training step's (every weight in the
// three forms on batch · seqLen rows); with opts.Decode, a prefill of
// decodeBatch prompts of promptLen tokens, both as the sampler runs it (each
// prompt alone, the head at its last token) and as one batched forward, and a
// decode step (decodeBatch rows, forward only). The attention products
// (scores and the weighted values) are left out: they are 1.5% of the
// qwen3-0.6b-4l train step's model FLOPs.
func ModelProducts(cfg qwen3.Config, opts Options) []Product {
	opts = opts.withDefaults()
	var ps []Product
	add := func(part string, forms []string, rows, rowsHead, times int) {
		for _, w := range layerWeights(cfg) {
			for _, f := range forms {
				ps = append(ps, Product{part, w.name, f, rows, w.in, w.out, w.each * cfg.Layers * times})
			}
		}
		for _, f := range forms {
			ps = append(ps, Product{part, "head", f, rowsHead, cfg.Hidden, cfg.VocabSize, times})
		}
	}
	forward := []string{FormForward}
	if opts.Train {
		t := opts.Batch * opts.SeqLen
		add(PartTrain, []string{FormForward, FormInputGrad, FormWeightGrad}, t, t, 1)
	}
	if opts.Decode {
		b := opts.DecodeBatch
		add(PartPrefillRow, forward, opts.PromptLen, 1, b)
		add(PartPrefillBatch, forward, b*opts.PromptLen, b, 1)
		add(PartDecode, forward, b, b, 1)
	}
	return ps
}

// MeasureProducts times every product of ps on b in dtype, built as the
// model builds it (gomlxfix.DotGeneralMatmul with the form's contracting
// axes) and summed to a scalar so that only 4 bytes come back, as
// MeasureMatmul times its squares: one call compiles, then the fastest of
// three timed calls. It returns the milliseconds of each product, in the order
// of ps; products of equal form and sizes are timed once. Progress goes to
// log.
func MeasureProducts(b compute.Backend, dtype dtypes.DType, ps []Product, log io.Writer) ([]float64, error) {
	name, err := dtypeName(dtype)
	if err != nil {
		return nil, err
	}
	ms := make([]float64, len(ps))
	done := map[[4]int]float64{}
	for i, p := range ps {
		if v, ok := done[p.key()]; ok {
			ms[i] = v
			continue
		}
		d, err := timeProduct(b, dtype, p)
		if err != nil {
			return nil, fmt.Errorf("bench: product %s %s %s %s: %w", p.Part, p.Weight, p.Form, name, err)
		}
		ms[i] = d.Seconds() * 1000
		done[p.key()] = ms[i]
		fmt.Fprintf(log, "products: %s %s %s [%d rows, %d in, %d out]: %.2f ms, %s\n", p.Part, p.Weight, p.Form,
			p.Rows, p.In, p.Out, ms[i], rate(p.FLOPs()/d.Seconds(), "FLOP"))
	}
	return ms, nil
}

// product builds p's product of x and y, whose shapes are p.operands(), as
// the model builds it.
func (p Product) product(x, y *graph.Node) *graph.Node {
	_, _, lc, rc := p.operands()
	return gomlxfix.DotGeneralMatmul(x, []int{lc}, nil, y, []int{rc}, nil)
}

// timeProduct compiles p's product on b and returns the fastest of
// matmulRepeats calls.
func timeProduct(b compute.Backend, dtype dtypes.DType, p Product) (time.Duration, error) {
	lhs, rhs, _, _ := p.operands()
	exec, err := graph.NewExec(b, func(x, y *graph.Node) *graph.Node {
		return graph.ReduceAllSum(p.product(x, y))
	})
	if err != nil {
		return 0, err
	}
	defer exec.Finalize()
	x, y := matrix(lhs, dtype, 1), matrix(rhs, dtype, 2)
	defer x.FinalizeAll()
	defer y.FinalizeAll()
	return fastestCall(exec, x, y)
}

// fastestCall calls exec on x and y once (it compiles), then matmulRepeats
// times, waiting for each scalar result, and returns the fastest of those.
// The inputs stay on the device between calls.
func fastestCall(exec *graph.Exec, x, y *tensors.Tensor) (time.Duration, error) {
	call := func() (time.Duration, error) {
		t0 := now()
		out, err := exec.Call(x, y)
		if err != nil {
			return 0, err
		}
		out[0].MustConstFlatData(func(any) {}) // wait for the result
		return now().Sub(t0), out[0].FinalizeAll()
	}
	if _, err := call(); err != nil { // compiles
		return 0, err
	}
	fastest := time.Duration(math.MaxInt64)
	for range matmulRepeats {
		d, err := call()
		if err != nil {
			return 0, err
		}
		fastest = min(fastest, d)
	}
	return fastest, nil
}

// matrix is a matrix of dims in dtype with values in [-1, 1), different for
// each seed (their values do not matter; they only must not all be zero).
func matrix(dims [2]int, dtype dtypes.DType, seed int) *tensors.Tensor {
	v := func(i int) float32 { return float32((i*(7+seed))%17)/8.5 - 1 }
	n := dims[0] * dims[1]
	if dtype == dtypes.BFloat16 {
		data := make([]bfloat16.BFloat16, n)
		for i := range data {
			data[i] = bfloat16.FromFloat32(v(i))
		}
		return tensors.FromFlatDataAndDimensions(data, dims[0], dims[1])
	}
	data := make([]float32, n)
	for i := range data {
		data[i] = v(i)
	}
	return tensors.FromFlatDataAndDimensions(data, dims[0], dims[1])
}
