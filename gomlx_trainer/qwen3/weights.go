package qwen3

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/dtypes/bfloat16"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/mathrl/mathrl/internal/atomicfile"
)

// Model is a Qwen3 config with its weights, held as variables of a GoMLX
// model.Store (one variable per Hugging Face tensor, see VariablePath).
type Model struct {
	Config Config
	DType  dtypes.DType // dtype of the weights and of the compute: Float32 or BFloat16
	Store  *model.Store // the weights
}

// checkDType accepts the two compute dtypes.
func checkDType(dtype dtypes.DType) error {
	if dtype != dtypes.Float32 && dtype != dtypes.BFloat16 {
		return fmt.Errorf("qwen3: compute dtype %s not supported (Float32 or BFloat16)", dtype)
	}
	return nil
}

// Load reads dir/config.json and the safetensors weights of dir, converting them
// to dtype. Every tensor the config needs must be there with its exact shape, and
// no other tensor may be (a tied checkpoint may also carry lm_head.weight, which is
// then ignored). Tensors are read one at a time.
func Load(dir string, dtype dtypes.DType) (*Model, error) {
	return load(dir, dtype, nil)
}

// LoadOn is Load, moving each weight onto backend b's device as soon as it is
// read and freeing the host copy, so the host never holds more than one tensor
// (an 8B checkpoint in bfloat16 is 16 GB).
func LoadOn(b compute.Backend, dir string, dtype dtypes.DType) (*Model, error) {
	return load(dir, dtype, b)
}

func load(dir string, dtype dtypes.DType, b compute.Backend) (*Model, error) {
	if err := checkDType(dtype); err != nil {
		return nil, err
	}
	cfg, err := LoadConfig(dir)
	if err != nil {
		return nil, err
	}
	ck, err := OpenCheckpoint(dir)
	if err != nil {
		return nil, err
	}
	defer ck.Close()
	if err := checkTensors(cfg, ck); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	m := &Model{Config: cfg, DType: dtype, Store: model.NewStore()}
	for _, spec := range cfg.Tensors() {
		t, err := ck.Read(spec.Name, dtype)
		if err != nil {
			return nil, err
		}
		if b != nil {
			if err := t.MaterializeOnDevice(b, false, 0); err != nil {
				return nil, fmt.Errorf("qwen3: tensor %q to device: %w", spec.Name, err)
			}
			t.FinalizeLocal()
		}
		m.setWeight(spec.Name, t)
	}
	return m, nil
}

// checkTensors compares the checkpoint's names and shapes with the config's.
func checkTensors(cfg Config, ck *Checkpoint) error {
	want := map[string][]int{}
	for _, s := range cfg.Tensors() {
		want[s.Name] = s.Shape
		info, ok := ck.Info(s.Name)
		if !ok {
			return fmt.Errorf("qwen3: tensor %q missing, want shape %v", s.Name, s.Shape)
		}
		if !slices.Equal(info.Shape, s.Shape) {
			return fmt.Errorf("qwen3: tensor %q: shape %v, want %v", s.Name, info.Shape, s.Shape)
		}
	}
	for _, name := range ck.Names() {
		if _, ok := want[name]; ok || strings.HasSuffix(name, "rotary_emb.inv_freq") {
			continue
		}
		if name == "lm_head.weight" && cfg.TieEmbeddings {
			info, _ := ck.Info(name)
			if shape := []int{cfg.VocabSize, cfg.Hidden}; !slices.Equal(info.Shape, shape) {
				return fmt.Errorf("qwen3: tensor %q: shape %v, want %v", name, info.Shape, shape)
			}
			continue
		}
		return fmt.Errorf("qwen3: tensor %q is not part of a model with this config.json", name)
	}
	return nil
}

// setWeight stores t as the variable of a Hugging Face tensor name.
func (m *Model) setWeight(name string, t *tensors.Tensor) {
	path := VariablePath(name)
	if v := m.Store.GetVariable(path); v != nil {
		v.MustSetValue(t)
		return
	}
	m.Store.VariableWithValue(path, t)
}

// NewRandom makes a model with random weights drawn as transformers initialises
// Qwen3 (normal with standard deviation 0.02, norms at 1), reproducibly from
// seed; WriteRandom writes the same weights without holding them in memory.
func NewRandom(cfg Config, dtype dtypes.DType, seed uint64) (*Model, error) {
	if err := checkDType(dtype); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := &Model{Config: cfg, DType: dtype, Store: model.NewStore()}
	for i, spec := range cfg.Tensors() {
		vals := randomValues(spec, seed, i)
		t := tensors.FromShape(shapes.Make(dtype, spec.Shape...))
		switch dtype {
		case dtypes.Float32:
			tensors.MustMutableFlatData(t, func(flat []float32) { copy(flat, vals) })
		case dtypes.BFloat16:
			tensors.MustMutableFlatData(t, func(flat []bfloat16.BFloat16) {
				for j, v := range vals {
					flat[j] = toBF16(v)
				}
			})
		}
		m.setWeight(spec.Name, t)
	}
	return m, nil
}

// randomValues draws tensor number index of a random model: its own stream, so
// that each tensor can be drawn alone.
func randomValues(spec TensorSpec, seed uint64, index int) []float32 {
	n := 1
	for _, d := range spec.Shape {
		n *= d
	}
	vals := make([]float32, n)
	if strings.HasSuffix(spec.Name, "norm.weight") {
		for i := range vals {
			vals[i] = 1
		}
		return vals
	}
	rng := rand.New(rand.NewPCG(seed, uint64(index)+0x9e3779b97f4a7c15))
	for i := range vals {
		vals[i] = float32(rng.NormFloat64() * 0.02)
	}
	return vals
}

// StoredDType returns the safetensors dtype ("BF16", "F16" or "F32") that
// name asks for: bf16 or bfloat16, f16 or float16, f32 or float32. An empty
// name keeps cfg's own torch_dtype (bfloat16 or float16), else gives F32.
func StoredDType(name string, cfg Config) (string, error) {
	if name == "" {
		name = cfg.DType
		if name != "bfloat16" && name != "float16" {
			return "F32", nil
		}
	}
	stored := map[string]string{"bf16": "BF16", "bfloat16": "BF16", "f16": "F16", "float16": "F16",
		"f32": "F32", "float32": "F32"}[name]
	if stored == "" {
		return "", fmt.Errorf("qwen3: stored dtype %q (bf16, f16 or f32)", name)
	}
	return stored, nil
}

// WriteRandom writes dir/config.json and dir/model.safetensors for a random
// model (the weights of NewRandom with the same seed), stored as dtype ("BF16",
// "F16" or "F32"), drawing one tensor at a time.
func WriteRandom(cfg Config, dir, dtype string, seed uint64) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	torch := map[string]string{"BF16": "bfloat16", "F16": "float16", "F32": "float32"}[dtype]
	if torch == "" {
		return fmt.Errorf("qwen3: write %s: dtype %q not supported (BF16, F16, F32)", dir, dtype)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("qwen3: %w", err)
	}
	var list []WriteTensor
	for i, spec := range cfg.Tensors() {
		list = append(list, WriteTensor{Name: spec.Name, Shape: spec.Shape, Values: func() ([]float32, error) {
			return randomValues(spec, seed, i), nil
		}})
	}
	if err := WriteSafetensors(filepath.Join(dir, "model.safetensors"), dtype, list); err != nil {
		return err
	}
	cfg.DType = torch
	data, err := cfg.MarshalHF()
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, "config.json"), data)
}

// Copy returns a model of m's config holding its own copies of m's weights
// (the tensors of m.Config.Tensors(), nothing else of m's store: no optimizer
// state), so that one can sample from it while m trains.
func (m *Model) Copy() (*Model, error) {
	c := &Model{Config: m.Config, DType: m.DType, Store: model.NewStore()}
	if err := c.CopyWeights(m); err != nil {
		return nil, err
	}
	return c, nil
}

// CopyWeights sets each of m's weights to a copy of src's (on the device
// src's is on, where the backend shares buffers with the host; else in host
// memory, moved to the device when first used), freeing m's old values. The
// two models must have the same config.
func (m *Model) CopyWeights(src *Model) error {
	if !reflect.DeepEqual(m.Config, src.Config) {
		return errors.New("qwen3: copy weights: the models' configs differ")
	}
	for _, spec := range src.Config.Tensors() {
		v := src.Weight(spec.Name)
		if v == nil {
			return fmt.Errorf("qwen3: copy weights: weight %q missing", spec.Name)
		}
		t, err := v.Value()
		if err != nil {
			return fmt.Errorf("qwen3: copy weights: %q: %w", spec.Name, err)
		}
		c, err := t.Clone()
		if err != nil {
			return fmt.Errorf("qwen3: copy weights: %q: %w", spec.Name, err)
		}
		if w := m.Weight(spec.Name); w != nil {
			if err := w.SetValue(c); err != nil {
				return fmt.Errorf("qwen3: copy weights: %q: %w", spec.Name, err)
			}
			continue
		}
		m.Store.VariableWithValue(VariablePath(spec.Name), c)
	}
	return nil
}

// Weight returns the variable holding a Hugging Face tensor, or nil.
func (m *Model) Weight(name string) *model.Variable {
	return m.Store.GetVariable(VariablePath(name))
}

// Save writes dir/config.json and dir/model.safetensors with the weights stored
// as dtype ("BF16", "F16" or "F32"); the config's torch_dtype says the same.
func (m *Model) Save(dir, dtype string) error {
	torch := map[string]string{"BF16": "bfloat16", "F16": "float16", "F32": "float32"}[dtype]
	if torch == "" {
		return fmt.Errorf("qwen3: save %s: dtype %q not supported (BF16, F16, F32)", dir, dtype)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("qwen3: %w", err)
	}
	var list []WriteTensor
	for _, spec := range m.Config.Tensors() {
		v := m.Weight(spec.Name)
		if v == nil {
			return fmt.Errorf("qwen3: save %s: weight %q missing", dir, spec.Name)
		}
		if !slices.Equal(v.Shape().Dimensions, spec.Shape) {
			return fmt.Errorf("qwen3: save %s: weight %q: shape %v, want %v", dir, spec.Name, v.Shape().Dimensions, spec.Shape)
		}
		list = append(list, WriteTensor{Name: spec.Name, Shape: spec.Shape, Values: func() ([]float32, error) {
			t, err := v.Value()
			if err != nil {
				return nil, err
			}
			vals, err := Float32s(t)
			if t.IsOnAnyDevice() {
				t.FinalizeLocal() // keep only the device copy
			}
			return vals, err
		}})
	}
	if err := WriteSafetensors(filepath.Join(dir, "model.safetensors"), dtype, list); err != nil {
		return err
	}
	cfg := m.Config
	cfg.DType = torch
	data, err := cfg.MarshalHF()
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, "config.json"), data)
}

// Float32s copies a Float32 or BFloat16 tensor's values as float32.
func Float32s(t *tensors.Tensor) ([]float32, error) {
	out := make([]float32, t.Shape().Size())
	switch t.DType() {
	case dtypes.Float32:
		tensors.MustConstFlatData(t, func(flat []float32) { copy(out, flat) })
	case dtypes.BFloat16:
		tensors.MustConstFlatData(t, func(flat []bfloat16.BFloat16) {
			for i, v := range flat {
				out[i] = v.Float32()
			}
		})
	default:
		return nil, fmt.Errorf("qwen3: tensor of %s, want Float32 or BFloat16", t.DType())
	}
	return out, nil
}

// tensorsFromFloat32 makes a Float32 tensor of the given shape.
func tensorsFromFloat32(values []float32, dims []int) *tensors.Tensor {
	return tensors.FromFlatDataAndDimensions(values, dims...)
}

// ParseDType reads a compute dtype name: "f32"/"float32" or "bf16"/"bfloat16".
func ParseDType(s string) (dtypes.DType, error) {
	switch s {
	case "f32", "float32":
		return dtypes.Float32, nil
	case "bf16", "bfloat16":
		return dtypes.BFloat16, nil
	}
	return dtypes.InvalidDType, fmt.Errorf("qwen3: dtype %q (f32 or bf16)", s)
}
