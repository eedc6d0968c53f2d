package grpo

import (
	"bufio"
	"encoding/gob"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"

	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// BenchmarkOptimizerState saves and loads the optimizer state (float32
// moments and gradient accumulators holding random values, three times the
// weights) of a random model of the "small" shapes (MATHRL_BENCH_CONFIG names
// another; qwen3-0.6b holds 10 GB and, with the copies this benchmark keeps,
// needs more than 24 GB of memory) as safetensors, the checkpoint format, and
// as gob, the format it replaced, in the same run, and reports the ratios
// safetensors/gob of the save and load times.
//
//	go test ./gomlx_trainer/grpo -run XXX -bench OptimizerState -benchtime 1x
func BenchmarkOptimizerState(b *testing.B) {
	name := os.Getenv("MATHRL_BENCH_CONFIG")
	if name == "" {
		name = "small"
	}
	cfg, err := qwen3.NamedConfig(name)
	if err != nil {
		b.Fatal(err)
	}
	model, err := qwen3.NewRandom(cfg, dtypes.Float32, 1)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	random := func(dims []int) *tensors.Tensor { // gob would store zeros in a byte each
		n := 1
		for _, d := range dims {
			n *= d
		}
		vals := make([]float32, n)
		for i := range vals {
			vals[i] = float32(rng.NormFloat64()) * 1e-3
		}
		return tensors.FromFlatDataAndDimensions(vals, dims...)
	}
	for _, v := range TrainableVariables(model.Store) { // the moments and accumulators AdamW would make
		dims := v.Shape().Dimensions
		model.Store.VariableWithValue(AdamScope+v.Path()+"_m", random(dims)).SetTrainable(false)
		model.Store.VariableWithValue(AdamScope+v.Path()+"_v", random(dims)).SetTrainable(false)
		model.Store.VariableWithValue(GradAccumScope+v.Path(), random(dims)).SetTrainable(false)
	}
	dir := b.TempDir()
	timed := func(f func() error) float64 {
		start := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		return time.Since(start).Seconds()
	}
	var st, gs, sl, gl float64
	for range b.N {
		st += timed(func() error { return writeOptimizer(filepath.Join(dir, "o.safetensors"), optimizerVars(model.Store)) })
		gs += timed(func() error { return writeGob(filepath.Join(dir, "o.gob"), model) })
		sl += timed(func() error { return readOptimizer(filepath.Join(dir, "o.safetensors"), model.Store) })
		gl += timed(func() error { return readGob(filepath.Join(dir, "o.gob")) })
	}
	b.ReportMetric(st/float64(b.N), "safetensors-save-s")
	b.ReportMetric(gs/float64(b.N), "gob-save-s")
	b.ReportMetric(sl/float64(b.N), "safetensors-load-s")
	b.ReportMetric(gl/float64(b.N), "gob-load-s")
	b.ReportMetric(st/gs, "save-safetensors/gob")
	b.ReportMetric(sl/gl, "load-safetensors/gob")
}

// writeGob writes the optimizer variables as the former format did: a count,
// then a (scope, name) pair and the tensor's gob for each.
func writeGob(path string, model *qwen3.Model) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	enc := gob.NewEncoder(w)
	vars := optimizerVars(model.Store)
	if err := enc.Encode(len(vars)); err != nil {
		return err
	}
	for _, v := range vars {
		t, err := v.Value()
		if err != nil {
			return err
		}
		if err := enc.Encode([2]string{v.Scope(), v.Name()}); err != nil {
			return err
		}
		if err := t.GobSerialize(enc); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Sync()
}

// readGob reads what writeGob wrote (the tensors are decoded, then dropped).
func readGob(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	dec := gob.NewDecoder(bufio.NewReader(f))
	var n int
	if err := dec.Decode(&n); err != nil {
		return err
	}
	for range n {
		var names [2]string
		if err := dec.Decode(&names); err != nil {
			return err
		}
		t, err := tensors.GobDeserialize(dec)
		if err != nil {
			return err
		}
		t.FinalizeAll()
	}
	return nil
}
