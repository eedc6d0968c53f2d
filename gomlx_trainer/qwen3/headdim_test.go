package qwen3

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
)

// wideHeads has head_dim 10 while hidden/heads is 6, as in Qwen3-0.6B (128 vs
// 1024/16) and Qwen3-4B (128 vs 2560/32); the tiny checkpoints have them equal.
var wideHeads = Config{VocabSize: 40, Hidden: 24, Intermediate: 40, Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 10,
	RMSNormEps: 1e-6, RopeTheta: 10000, TieEmbeddings: false, MaxPositions: 64, EOSTokenIDs: []int{1},
	DType: "float32", TransformersModel: "qwen3"}

// TestHeadDimNotHiddenOverHeads writes and loads a checkpoint whose head_dim is
// not hidden/heads, checks the attention weights' shapes, and compares its
// logits with refForward, a float64 forward pass written from the Qwen3
// equations that shares no code with the graph.
func TestHeadDimNotHiddenOverHeads(t *testing.T) {
	dir := t.TempDir()
	if err := WriteRandom(wideHeads, dir, "F32", 7); err != nil {
		t.Fatal(err)
	}
	m, err := Load(dir, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	if m.Config.HeadDim != 10 {
		t.Fatalf("head_dim read back as %d, want 10", m.Config.HeadDim)
	}
	for name, want := range map[string][]int{
		"model.layers.1.self_attn.q_proj.weight": {40, 24}, // [heads*head_dim, hidden]
		"model.layers.1.self_attn.k_proj.weight": {20, 24}, // [kv_heads*head_dim, hidden]
		"model.layers.1.self_attn.v_proj.weight": {20, 24},
		"model.layers.1.self_attn.o_proj.weight": {24, 40}, // [hidden, heads*head_dim]
		"model.layers.1.self_attn.q_norm.weight": {10},
		"model.layers.1.self_attn.k_norm.weight": {10},
	} {
		if v := m.Weight(name); v == nil {
			t.Errorf("%s: missing", name)
		} else if got := v.Shape().Dimensions; !slices.Equal(got, want) {
			t.Errorf("%s: shape %v, want %v", name, got, want)
		}
	}
	ids := [][]int32{{3, 17, 1, 39, 5, 22}}
	got := logitsOf(t, backendtest.New(t), m, ids)
	want := refForward(t, m, ids[0])
	worst := 0.0
	for p := range want {
		worst = max(worst, relErr(got[0][p], want[p]))
	}
	// float32 graph against a float64 reference: measured 1.8e-7.
	t.Logf("logits: max error relative to the row's largest logit %.2e", worst)
	if worst > 1e-5 {
		t.Errorf("logits differ from the reference forward by %.2e of the largest", worst)
	}
}

// refWeights reads every weight of m as float64, by Hugging Face name.
func refWeights(t *testing.T, m *Model) map[string][]float64 {
	t.Helper()
	w := map[string][]float64{}
	for _, spec := range m.Config.Tensors() {
		v, err := m.Weight(spec.Name).Value()
		if err != nil {
			t.Fatal(err)
		}
		f, err := Float32s(v)
		if err != nil {
			t.Fatal(err)
		}
		w[spec.Name] = make([]float64, len(f))
		for i, x := range f {
			w[spec.Name][i] = float64(x)
		}
	}
	return w
}

// refForward returns the logits [seq][vocab] of one sequence, computed in
// float64 one position and one head at a time.
func refForward(t *testing.T, m *Model, ids []int32) [][]float64 {
	c, w := m.Config, refWeights(t, m)
	x := make([][]float64, len(ids))
	for p, id := range ids {
		x[p] = slices.Clone(w["model.embed_tokens.weight"][int(id)*c.Hidden : int(id+1)*c.Hidden])
	}
	for l := 0; l < c.Layers; l++ {
		x = refLayer(c, func(n string) []float64 { return w[layerName(l, n)] }, x)
	}
	out := make([][]float64, len(x))
	for p := range x {
		head := w["lm_head.weight"]
		if c.TieEmbeddings {
			head = w["model.embed_tokens.weight"]
		}
		out[p] = matVec(head, refNorm(x[p], w["model.norm.weight"], c.RMSNormEps))
	}
	return out
}

func layerName(l int, name string) string { return fmt.Sprintf("model.layers.%d.%s.weight", l, name) }

// refLayer is one decoder layer: x + attention(norm(x)), then + mlp(norm(.)).
func refLayer(c Config, w func(string) []float64, x [][]float64) [][]float64 {
	hd := c.HeadDim
	q, k, v := make([][]float64, len(x)), make([][]float64, len(x)), make([][]float64, len(x))
	for p := range x {
		h := refNorm(x[p], w("input_layernorm"), c.RMSNormEps)
		q[p], k[p], v[p] = matVec(w("self_attn.q_proj"), h), matVec(w("self_attn.k_proj"), h), matVec(w("self_attn.v_proj"), h)
		for i := 0; i < len(q[p]); i += hd {
			copy(q[p][i:i+hd], refRope(c, refNorm(q[p][i:i+hd], w("self_attn.q_norm"), c.RMSNormEps), p))
		}
		for i := 0; i < len(k[p]); i += hd {
			copy(k[p][i:i+hd], refRope(c, refNorm(k[p][i:i+hd], w("self_attn.k_norm"), c.RMSNormEps), p))
		}
	}
	out := make([][]float64, len(x))
	for p := range x {
		a := add(x[p], matVec(w("self_attn.o_proj"), refAttend(c, q, k, v, p)))
		h := refNorm(a, w("post_attention_layernorm"), c.RMSNormEps)
		gate, up := matVec(w("mlp.gate_proj"), h), matVec(w("mlp.up_proj"), h)
		for i, g := range gate {
			gate[i] = g / (1 + math.Exp(-g)) * up[i] // SiLU(gate) * up
		}
		out[p] = add(a, matVec(w("mlp.down_proj"), gate))
	}
	return out
}

// refAttend is causal grouped-query attention for the query at position p:
// query head j reads key/value head j/(heads/kvHeads); scores are scaled by
// 1/sqrt(head_dim).
func refAttend(c Config, q, k, v [][]float64, p int) []float64 {
	hd, group := c.HeadDim, c.Heads/c.KVHeads
	out := make([]float64, c.Heads*hd)
	for j := 0; j < c.Heads; j++ {
		qj, kv := q[p][j*hd:(j+1)*hd], (j/group)*hd
		scores := make([]float64, p+1)
		for s := range scores {
			scores[s] = dot(qj, k[s][kv:kv+hd]) / math.Sqrt(float64(hd))
		}
		for s, prob := range softmax(scores) {
			for i := 0; i < hd; i++ {
				out[j*hd+i] += prob * v[s][kv+i]
			}
		}
	}
	return out
}

// refNorm is RMSNorm: x / sqrt(mean(x^2) + eps) * w.
func refNorm(x, w []float64, eps float64) []float64 {
	ms := dot(x, x) / float64(len(x))
	out := make([]float64, len(x))
	for i := range x {
		out[i] = x[i] / math.Sqrt(ms+eps) * w[i]
	}
	return out
}

// refRope rotates one head at position p: pairs (i, i+d/2) turn by
// p * theta^(-2i/d), transformers' rotate_half layout. With c.RopeBF16 the
// frequencies are rounded to bfloat16 first, as transformers' buffer is.
func refRope(c Config, x []float64, p int) []float64 {
	half := len(x) / 2
	out := make([]float64, len(x))
	for i := 0; i < half; i++ {
		inv := math.Pow(c.RopeTheta, -float64(2*i)/float64(len(x)))
		if c.RopeBF16 {
			inv = float64(toBF16(float32(inv)).Float32())
		}
		angle := float64(p) * inv
		cos, sin := math.Cos(angle), math.Sin(angle)
		out[i] = x[i]*cos - x[i+half]*sin
		out[i+half] = x[i+half]*cos + x[i]*sin
	}
	return out
}

// matVec applies a Hugging Face linear weight [out, in] (row-major) to x.
func matVec(w, x []float64) []float64 {
	out := make([]float64, len(w)/len(x))
	for o := range out {
		out[o] = dot(w[o*len(x):(o+1)*len(x)], x)
	}
	return out
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func add(a, b []float64) []float64 {
	out := make([]float64, len(a))
	for i := range a {
		out[i] = a[i] + b[i]
	}
	return out
}

func softmax(x []float64) []float64 {
	top := slices.Max(x)
	out := make([]float64, len(x))
	sum := 0.0
	for i, v := range x {
		out[i] = math.Exp(v - top)
		sum += out[i]
	}
	for i := range out {
		out[i] /= sum
	}
	return out
}

// TestReferenceForwardMatchesTransformers checks refForward itself against
// transformers' logits for the tiny checkpoint (measured: 3.8e-7 of the
// largest logit), so that TestHeadDimNotHiddenOverHeads compares with a
// reference that is known to be right.
func TestReferenceForwardMatchesTransformers(t *testing.T) {
	dir, ref := loadReference(t)
	m, err := Load(dir, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	got := refForward(t, storedReferenceRoPE(m), ref.InputIDs[0])
	if e := relErr(got[len(got)-1], ref.LogitsLast[0]); e > 1e-5 {
		t.Errorf("reference forward: last logits differ from transformers' by %.2e of the largest", e)
	}
}
