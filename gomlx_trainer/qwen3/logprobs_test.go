package qwen3

import (
	"math"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
	"github.com/mathrl/mathrl/gomlx_trainer/gomlxfix"
)

// TestTokenLogProbs compares TokenLogProbs with log_softmax of Logits computed on
// the host, on a batch with two rows.
func TestTokenLogProbs(t *testing.T) {
	dir, ref := loadReference(t)
	b := backendtest.New(t)
	m, err := Load(dir, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	ids := [][]int32{ref.InputIDs[0][:12], ref.InputIDs[0][12:24]}
	const temperature = 0.8
	logits := logitsOf(t, b, m, ids)
	exec := model.MustNewExec(b, m.Store, func(scope *model.Scope, ids *Node) *Node {
		return TokenLogProbs(scope, m.Config, ids, temperature)
	})
	got, err := Float32s(exec.MustCall(ids)[0])
	if err != nil {
		t.Fatal(err)
	}
	for r := range ids {
		if got[r*12] != 0 {
			t.Errorf("row %d position 0: %g, want 0", r, got[r*12])
		}
		for p := 1; p < 12; p++ {
			row := logits[r][p-1]
			mx := math.Inf(-1)
			for _, v := range row {
				mx = math.Max(mx, v/temperature)
			}
			sum := 0.0
			for _, v := range row {
				sum += math.Exp(v/temperature - mx)
			}
			want := row[ids[r][p]]/temperature - mx - math.Log(sum)
			if d := math.Abs(float64(got[r*12+p]) - want); d > 1e-5*(1+math.Abs(want)) {
				t.Errorf("row %d position %d: %g, want %g", r, p, got[r*12+p], want)
			}
		}
	}
}

// TestTokenLogProbsGradient differentiates the summed log-probabilities on the
// pure Go backend (which needs the gomlxfix rules for Slice) and checks the
// gradient against central finite differences for weights in the attention
// (through RoPE), the MLP and the final norm.
func TestTokenLogProbsGradient(t *testing.T) {
	dir, ref := loadReference(t)
	b := backendtest.New(t)
	m, err := Load(dir, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	ids := [][]int32{ref.InputIDs[0][:16]}
	loss := func(scope *model.Scope, ids *Node) *Node {
		return ReduceAllSum(TokenLogProbs(scope, m.Config, ids, 1))
	}
	lossExec := model.MustNewExec(b, m.Store, loss)
	lossAt := func() float64 {
		v, _ := Float32s(lossExec.MustCall(ids)[0])
		return float64(v[0])
	}
	for _, tc := range []struct {
		name  string
		index int
	}{
		{"model.layers.0.self_attn.k_proj.weight", 70},
		{"model.layers.1.self_attn.q_proj.weight", 5},
		{"model.layers.0.mlp.gate_proj.weight", 11},
		{"model.norm.weight", 3},
	} {
		v := m.Weight(tc.name)
		gradExec := model.MustNewExec(b, m.Store, func(scope *model.Scope, ids *Node) *Node {
			return Gradient(loss(scope, ids), gomlxfix.VariableNode(v, ids.Graph()))[0]
		})
		grad, _ := Float32s(gradExec.MustCall(ids)[0])
		orig := v.MustValue()
		vals, _ := Float32s(orig)
		const eps = 1e-2
		at := func(delta float32) float64 {
			changed := append([]float32(nil), vals...)
			changed[tc.index] += delta
			m.setWeight(tc.name, tensorsFromFloat32(changed, v.Shape().Dimensions))
			return lossAt()
		}
		fd := (at(eps) - at(-eps)) / (2 * eps)
		m.setWeight(tc.name, tensorsFromFloat32(vals, v.Shape().Dimensions))
		g := float64(grad[tc.index])
		t.Logf("%s[%d]: gradient %g, finite difference %g", tc.name, tc.index, g, fd)
		if math.Abs(g-fd) > 2e-2*math.Max(math.Abs(fd), 0.05) {
			t.Errorf("%s[%d]: gradient %g, finite difference %g", tc.name, tc.index, g, fd)
		}
	}
}
