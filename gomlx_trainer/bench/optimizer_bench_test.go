package bench

import (
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL reads best dot-imported
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
	"github.com/mathrl/mathrl/gomlx_trainer/gomlxfix"
	"github.com/mathrl/mathrl/gomlx_trainer/grpo"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// BenchmarkOptimizerStep times the train step's optimizer alone on
// qwen3-0.6b-4l in float32 (219 M weights): grpo.ApplyAdamW with the
// trainer's settings (the global-norm clip included), each weight's gradient
// a multiple of the weight, so that the graph holds nothing but the update.
// An AdamW step reads every weight and its two moments and writes all three
// (24 bytes a weight, 5.3 GB); the reported update-GB/s is those bytes per
// second, to read against the copy bandwidth of `mathrl bench --roofline`:
//
//	MATHRL_TEST_BACKEND=xla-cpu go test ./gomlx_trainer/bench -run '^$' -bench OptimizerStep -benchtime 5x
func BenchmarkOptimizerStep(b *testing.B) {
	be := backendtest.New(b)
	cfg, err := qwen3.NamedConfig("qwen3-0.6b-4l")
	if err != nil {
		b.Fatal(err)
	}
	m, err := qwen3.NewRandom(cfg, dtypes.Float32, 0)
	if err != nil {
		b.Fatal(err)
	}
	adam, lr := TrainerAdamW()
	vars := grpo.TrainableVariables(m.Store)
	if err := grpo.CreateUpdateState(m.Store, vars, adam.Precision); err != nil {
		b.Fatal(err)
	}
	exec, err := mlmodel.NewExec(be, m.Store, func(scope *mlmodel.Scope, rate *Node) *Node {
		vs := grpo.TrainableVariables(scope.Store())
		grads := make([]*Node, len(vs))
		for i, v := range vs {
			grads[i] = MulScalar(gomlxfix.VariableNode(v, rate.Graph()), 1e-3)
		}
		return grpo.ApplyAdamW(scope.Store(), vs, grads, rate, adam)
	})
	if err != nil {
		b.Fatal(err)
	}
	call := func() {
		out, err := exec.Call(float32(lr))
		if err != nil {
			b.Fatal(err)
		}
		out[0].MustConstFlatData(func(any) {})
	}
	call() // compiles
	b.ResetTimer()
	for range b.N {
		call()
	}
	bytes := 24 * float64(cfg.Params())
	b.ReportMetric(bytes*float64(b.N)/b.Elapsed().Seconds()/1e9, "update-GB/s")
}
