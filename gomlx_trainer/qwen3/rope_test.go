package qwen3

import (
	"fmt"
	"math"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"

	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
)

// TestRopeTablesAtLongPositions builds RoPE's cos and sin tables of
// Qwen3-0.6B's shape (head_dim 128, rope_theta 1e6) at positions up to its
// 40,960, in float32 and in bfloat16, against cos and sin of
// p·theta^(-2i/head_dim) in float64. The angles are computed in float32
// whatever the model's dtype (as transformers, SGLang and vLLM do), so a
// table is off by the float32 rounding of its angle (at most angle·2^-22
// here) and, in bfloat16, the rounding of the value (2^-9): under 0.012 at
// position 40,959. Angles computed in bfloat16 (positions 256 apart there)
// or from bfloat16 frequencies are off by whole radians.
func TestRopeTablesAtLongPositions(t *testing.T) {
	cfg, err := NamedConfig("qwen3-0.6b")
	if err != nil {
		t.Fatal(err)
	}
	positions := [][]int32{{0, 1, 1000, 30000, 30001, 40959}}
	for _, dtype := range []dtypes.DType{dtypes.Float32, dtypes.BFloat16} {
		out := MustExecOnceN(backendtest.New(t), func(pos *Node) []*Node {
			cos, sin := ropeTables(cfg, pos, dtype)
			if cos.DType() != dtype || sin.DType() != dtype {
				t.Errorf("%s: tables in %s and %s", dtype, cos.DType(), sin.DType())
			}
			return []*Node{ConvertDType(cos, dtypes.Float32), ConvertDType(sin, dtypes.Float32)}
		}, positions)
		cos, sin := out[0].Value().([][][]float32)[0], out[1].Value().([][][]float32)[0]
		valueRounding := 1e-6
		if dtype == dtypes.BFloat16 {
			valueRounding = math.Exp2(-9)
		}
		worst, over, at := 0.0, 0.0, ""
		for k, p := range positions[0] {
			for j := range cfg.HeadDim {
				i := j % (cfg.HeadDim / 2)
				angle := float64(p) * math.Pow(cfg.RopeTheta, -2*float64(i)/float64(cfg.HeadDim))
				tol := valueRounding + angle*math.Exp2(-22)
				d := max(math.Abs(float64(cos[k][j])-math.Cos(angle)), math.Abs(float64(sin[k][j])-math.Sin(angle)))
				worst = max(worst, d)
				if d-tol > over {
					over, at = d-tol, fmt.Sprintf("position %d, dim %d: off by %.3g, tolerance %.3g", p, j, d, tol)
				}
			}
		}
		t.Logf("%s: tables within %.3g of float64", dtype, worst)
		if over > 0 {
			t.Errorf("%s: tables off by up to %.3g beyond the tolerance, at %s", dtype, over, at)
		}
	}
}
