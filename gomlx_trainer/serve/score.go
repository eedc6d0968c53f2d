package serve

import (
	"fmt"
	"math"

	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // graph-building code reads better unqualified
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/mathrl/mathrl/gomlx_trainer/engine"
	"github.com/mathrl/mathrl/gomlx_trainer/gomlxfix"
	"github.com/mathrl/mathrl/gomlx_trainer/layout"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// scoreJob is a scoring request (SGLang's max_new_tokens 0 with
// return_logprob): the log-probs of the input's tokens from position start
// on, each given the tokens before it, at temperature.
type scoreJob struct {
	start       int
	temperature float64
}

// scorer computes the log-probs of a sequence's own tokens under the
// server's current model, as grpo's learner does (qwen3.TargetLogProbsOf,
// one row padded to layout.PadLength), so that a served teacher gives the
// trainer the numbers an in-process one would. It runs on the scheduler's
// goroutine; its graphs, one per temperature, are those of model.
type scorer struct {
	model *qwen3.Model
	execs map[float64]*mlmodel.Exec
}

// runScore answers j, a scoring job, with the current weights (the
// scheduler's model, whose graphs s.scoring keeps until a swap).
func (s *Server) runScore(j *job) (res result) {
	defer func() {
		if r := recover(); r != nil {
			res = result{err: fmt.Errorf("serve: log-probs: %v", r)}
		}
	}()
	s.mu.Lock()
	m := s.model
	s.mu.Unlock()
	if s.scoring == nil || s.scoring.model != m {
		s.scoring = &scorer{model: m, execs: map[float64]*mlmodel.Exec{}}
	}
	lp, err := s.scoring.logProbs(s, j.ids, j.score.temperature)
	if err != nil {
		return result{err: err}
	}
	return result{input: lp[j.score.start:]}
}

// logProbs returns, for k in [0, len(ids)), the log-prob of ids[k] given
// ids[:k] (k = 0, without context, is NaN: SGLang's null).
func (sc *scorer) logProbs(s *Server, ids []int, temperature float64) ([]float32, error) {
	e, ok := sc.execs[temperature]
	if !ok {
		gomlxfix.Install()
		cfg := sc.model.Config
		var err error
		e, err = mlmodel.NewExec(s.opt.Backend, sc.model.Store, func(scope *mlmodel.Scope, ids, targets *Node) *Node {
			logp, _ := qwen3.TargetLogProbsOf(scope, cfg, ids, targets, temperature, qwen3.ModelOptions{})
			return logp
		})
		if err != nil {
			return nil, fmt.Errorf("serve: log-probs: %w", err)
		}
		sc.execs[temperature] = e
	}
	t := layout.PadLength(len(ids))
	row, targets := make([]int32, t), make([]int32, t)
	for k, id := range ids {
		row[k] = int32(id)
	}
	copy(targets, row[1:])
	out, err := e.Call([][]int32{row}, [][]int32{targets})
	if err != nil {
		return nil, fmt.Errorf("serve: log-probs: %w", err)
	}
	logp := out[0].Value().([][]float32)[0]
	lp := make([]float32, len(ids))
	lp[0] = float32(math.NaN())
	copy(lp[1:], logp[:len(ids)-1]) // position k−1 scores the token at k
	return lp, nil
}

// scoreAnswer is SGLang's answer to a scoring request of the prompt ids:
// no output, and meta_info.input_token_logprobs from logprob_start_len on
// (the first token's log-prob null).
func scoreAnswer(ids []int, start int, lp []float32) engine.SGLangResponse {
	var out engine.SGLangResponse
	out.MetaInfo.PromptTokens = len(ids)
	out.MetaInfo.FinishReason.Type = "length"
	out.MetaInfo.InputTokenLogprobs = make([]engine.InputTokenLogprob, len(lp))
	for k, v := range lp {
		id := ids[start+k]
		entry := engine.InputTokenLogprob{TokenLogprob: engine.TokenLogprob{ID: &id}}
		if start+k > 0 {
			f := float64(v)
			entry.LogProb = &f
		}
		out.MetaInfo.InputTokenLogprobs[k] = entry
	}
	return out
}
