package qwen3

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
)

func TestHalfPrecisionConversions(t *testing.T) {
	// Bit patterns from IEEE 754 half precision and PyTorch's bfloat16 (round to nearest even).
	for _, tc := range []struct {
		f    float32
		f16  uint16
		bf16 uint16
	}{
		{1, 0x3c00, 0x3f80},
		{-2, 0xc000, 0xc000},
		{65504, 0x7bff, 0x4780},                 // bf16: 0x477fe000 rounds up to 65536
		{5.960464477539063e-08, 0x0001, 0x3380}, // smallest f16 subnormal
		{0.1, 0x2e66, 0x3dcd},                   // bf16 rounds 0x3dcccccd up
		{1.00390625, 0x3c04, 0x3f80},            // 1 + 2^-8: bf16 tie, rounds to even
		{float32(math.Inf(1)), 0x7c00, 0x7f80},
	} {
		if got := float32ToFloat16(tc.f); got != tc.f16 {
			t.Errorf("float32ToFloat16(%g) = %#04x, want %#04x", tc.f, got, tc.f16)
		}
		if got := float32ToBF16(tc.f); got != tc.bf16 {
			t.Errorf("float32ToBF16(%g) = %#04x, want %#04x", tc.f, got, tc.bf16)
		}
		if back := float16ToFloat32(tc.f16); math.Abs(float64(back-tc.f)) > 1e-3*math.Abs(float64(tc.f)) && !math.IsInf(float64(tc.f), 0) {
			t.Errorf("float16ToFloat32(%#04x) = %g, want about %g", tc.f16, back, tc.f)
		}
	}
}

func tinyTestConfig(t *testing.T) Config {
	cfg, err := NamedConfig("tiny")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestSaveLoadRoundTrip(t *testing.T) {
	cfg := tinyTestConfig(t)
	m, err := NewRandom(cfg, dtypes.Float32, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, dtype := range []string{"F32", "BF16", "F16"} {
		dir := t.TempDir()
		if err := m.Save(dir, dtype); err != nil {
			t.Fatal(err)
		}
		back, err := Load(dir, dtypes.Float32)
		if err != nil {
			t.Fatal(err)
		}
		for _, spec := range cfg.Tensors() {
			a, _ := Float32s(m.Weight(spec.Name).MustValue())
			b, _ := Float32s(back.Weight(spec.Name).MustValue())
			for i := range a {
				var want float32
				switch dtype {
				case "F32":
					want = a[i]
				case "BF16":
					want = toBF16(a[i]).Float32()
				case "F16":
					want = float16ToFloat32(float32ToFloat16(a[i]))
				}
				if b[i] != want {
					t.Fatalf("%s %s[%d] = %g, want %g", dtype, spec.Name, i, b[i], want)
				}
			}
		}
		// Reading BF16 weights straight into bfloat16 keeps the bits.
		if dtype == "BF16" {
			bf, err := Load(dir, dtypes.BFloat16)
			if err != nil {
				t.Fatal(err)
			}
			a, _ := Float32s(bf.Weight("model.norm.weight").MustValue())
			if a[0] != 1 {
				t.Errorf("bf16 norm weight %g, want 1", a[0])
			}
		}
	}
}

func TestShardedCheckpoint(t *testing.T) {
	cfg := tinyTestConfig(t)
	m, err := NewRandom(cfg, dtypes.Float32, 2)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	specs := cfg.Tensors()
	index := map[string]string{}
	shards := [][]TensorSpec{specs[:len(specs)/2], specs[len(specs)/2:]}
	for k, shard := range shards {
		name := []string{"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}[k]
		var list []WriteTensor
		for _, s := range shard {
			v := m.Weight(s.Name)
			list = append(list, WriteTensor{Name: s.Name, Shape: s.Shape, Values: func() ([]float32, error) { return Float32s(v.MustValue()) }})
			index[s.Name] = name
		}
		if err := WriteSafetensors(filepath.Join(dir, name), "F32", list); err != nil {
			t.Fatal(err)
		}
	}
	idx, _ := json.Marshal(map[string]any{"metadata": map[string]any{}, "weight_map": index})
	if err := os.WriteFile(filepath.Join(dir, "model.safetensors.index.json"), idx, 0o644); err != nil {
		t.Fatal(err)
	}
	data, _ := cfg.MarshalHF()
	if err := os.WriteFile(filepath.Join(dir, "config.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := Load(dir, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := Float32s(m.Weight("model.layers.1.mlp.down_proj.weight").MustValue())
	b, _ := Float32s(back.Weight("model.layers.1.mlp.down_proj.weight").MustValue())
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("value %d: %g, want %g", i, b[i], a[i])
		}
	}
	// An index naming the wrong shard is an error.
	index["model.norm.weight"] = "model-00001-of-00002.safetensors"
	idx, _ = json.Marshal(map[string]any{"weight_map": index})
	os.WriteFile(filepath.Join(dir, "model.safetensors.index.json"), idx, 0o644)
	if _, err := Load(dir, dtypes.Float32); err == nil || !strings.Contains(err.Error(), "model.norm.weight") {
		t.Errorf("wrong shard in index: %v", err)
	}
}

func TestLoadRejectsMismatches(t *testing.T) {
	cfg := tinyTestConfig(t)
	m, err := NewRandom(cfg, dtypes.Float32, 3)
	if err != nil {
		t.Fatal(err)
	}
	write := func(t *testing.T, edit func([]WriteTensor) []WriteTensor) string {
		dir := t.TempDir()
		var list []WriteTensor
		for _, s := range cfg.Tensors() {
			v := m.Weight(s.Name)
			list = append(list, WriteTensor{Name: s.Name, Shape: s.Shape, Values: func() ([]float32, error) { return Float32s(v.MustValue()) }})
		}
		if err := WriteSafetensors(filepath.Join(dir, "model.safetensors"), "BF16", edit(list)); err != nil {
			t.Fatal(err)
		}
		data, _ := cfg.MarshalHF()
		os.WriteFile(filepath.Join(dir, "config.json"), data, 0o644)
		return dir
	}
	for _, tc := range []struct {
		name string
		edit func([]WriteTensor) []WriteTensor
		want []string
	}{
		{"missing tensor", func(l []WriteTensor) []WriteTensor { return l[1:] }, []string{"model.embed_tokens.weight", "missing", "[300 64]"}},
		{"wrong shape", func(l []WriteTensor) []WriteTensor {
			l[2] = WriteTensor{Name: l[2].Name, Shape: []int{65, 64}, Values: func() ([]float32, error) { return make([]float32, 65*64), nil }}
			return l
		}, []string{"model.layers.0.self_attn.q_proj.weight", "[65 64]", "want [64 64]"}},
		{"extra tensor", func(l []WriteTensor) []WriteTensor {
			return append(l, WriteTensor{Name: "model.layers.9.mlp.up_proj.weight", Shape: []int{2}, Values: func() ([]float32, error) { return []float32{1, 2}, nil }})
		}, []string{"model.layers.9.mlp.up_proj.weight"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(write(t, tc.edit), dtypes.Float32)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	// A truncated file is an error, not a short read later.
	dir := write(t, func(l []WriteTensor) []WriteTensor { return l })
	path := filepath.Join(dir, "model.safetensors")
	st, _ := os.Stat(path)
	os.Truncate(path, st.Size()-10)
	if _, err := Load(dir, dtypes.Float32); err == nil || !strings.Contains(err.Error(), "data_offsets") {
		t.Errorf("truncated file: %v", err)
	}
}

func TestWriteRandomIsNewRandom(t *testing.T) {
	cfg := tinyTestConfig(t)
	dir := t.TempDir()
	if err := WriteRandom(cfg, dir, "F32", 9); err != nil {
		t.Fatal(err)
	}
	written, err := Load(dir, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewRandom(cfg, dtypes.Float32, 9)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewRandom(cfg, dtypes.Float32, 10)
	for _, spec := range cfg.Tensors() {
		a, _ := Float32s(m.Weight(spec.Name).MustValue())
		b, _ := Float32s(written.Weight(spec.Name).MustValue())
		c, _ := Float32s(other.Weight(spec.Name).MustValue())
		same := true
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("%s[%d]: written %g, NewRandom %g", spec.Name, i, b[i], a[i])
			}
			same = same && a[i] == c[i]
		}
		if same && !strings.HasSuffix(spec.Name, "norm.weight") {
			t.Errorf("%s: seeds 9 and 10 give the same values", spec.Name)
		}
	}
}
