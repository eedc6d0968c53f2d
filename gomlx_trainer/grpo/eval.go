package grpo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gomlx/compute"

	"github.com/mathrl/mathrl/analysis/metrics"
	"github.com/mathrl/mathrl/analysis/scorer"
	"github.com/mathrl/mathrl/gomlx_trainer/engine"
	"github.com/mathrl/mathrl/gomlx_trainer/engine/inprocess"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/gomlx_trainer/tokenizer"
	"github.com/mathrl/mathrl/gomlx_trainer/toolloop"
	"github.com/mathrl/mathrl/internal/atomicfile"
)

// EvalOptions say how to evaluate: k samples per problem at a token budget,
// scored by one scorer. The trainer's periodic evaluation and `mathrl eval`
// fill them from the same places, so their numbers agree.
type EvalOptions struct {
	ModelName   string    // recorded in every sample (model folder or run/step)
	Problems    []Problem // what to solve
	K           int       // samples per problem
	Budget      int       // response tokens per sample, tool responses included
	Temperature float64   // 0: greedy
	TopP        float64   // 1: off
	Scorer      string    // rm_type
	UseTools    bool      // run code_interpreter calls
	MaxTurns    int       // tool calls per sample
	Seed        uint64    // sampling seed; batch b uses Seed + b
	BatchSize   int       // sequences generated at once (0: 64)
	Progress    io.Writer // a line every 30 s while it runs (nil: none)
}

// Evaluate samples K responses per problem with the policy behind eng and
// scores them. Tool calls go through tools (nil when UseTools is off).
func Evaluate(ctx context.Context, eng engine.Engine, proto *tokenizer.Protocol, tools toolloop.ToolRunner, opt EvalOptions) ([]metrics.Sample, error) {
	bs := opt.BatchSize
	if bs <= 0 {
		bs = 64
	}
	type job struct {
		p     Problem
		index int
	}
	var jobs []job
	for _, p := range opt.Problems {
		for k := 0; k < opt.K; k++ {
			jobs = append(jobs, job{p, k})
		}
	}
	reward := ScorerReward(opt.Scorer)
	var ph *phase
	if opt.Progress != nil {
		ph = newProgress(opt.Progress).phase("eval", len(jobs), bs, opt.Budget)
	}
	out := make([]metrics.Sample, 0, len(jobs))
	for start, b := 0, 0; start < len(jobs); start, b = start+bs, b+1 {
		part := jobs[start:min(start+bs, len(jobs))]
		prompts := make([][]int, len(part))
		for i, j := range part {
			ids, err := proto.PromptIDs(j.p.Text)
			if err != nil {
				return nil, err
			}
			prompts[i] = ids
		}
		seed := opt.Seed + uint64(b)
		samples, _, err := generate(ctx, eng, proto, tools, prompts, genOptions{
			budget: opt.Budget, temperature: opt.Temperature, topP: opt.TopP,
			useTools: opt.UseTools, maxTurns: opt.MaxTurns, seed: seed, progress: ph.batch(),
		})
		if err != nil {
			return nil, err
		}
		for i, s := range samples {
			j := part[i]
			r := reward(s.Text, j.p.Answer, s.ToolCalls)
			ms := metrics.Sample{
				Version: metrics.SamplesVersion, ProblemID: j.p.ID, SampleIndex: j.index,
				Response: s.Text, ResponseTokens: len(s.IDs), Finish: s.Finish, ToolCalls: s.ToolCalls,
				Score: r.Value, Scorer: opt.Scorer, Budget: opt.Budget, Model: opt.ModelName,
				Seed: int64(seed), Label: j.p.Answer,
			}
			if r.Err != nil {
				ms.Score, ms.Error = 0, r.Err.Error()
			}
			out = append(out, ms)
		}
	}
	return out, nil
}

// genOptions are the sampling knobs of one batch of samples.
type genOptions struct {
	budget        int
	temperature   float64
	topP          float64
	topK          int
	useTools      bool
	maxTurns      int
	concurrency   int
	seed          uint64
	toolDeadlineS float64
	progress      toolloop.Progress // hears how the batch goes (nil: nobody)
}

// generate runs the multi-turn tool loop on a batch of prompts, in a session
// of eng.
func generate(ctx context.Context, eng engine.Engine, proto *tokenizer.Protocol, tools toolloop.ToolRunner, prompts [][]int, o genOptions) ([]toolloop.Sample, toolloop.Stats, error) {
	sp := proto.Tok.Special()
	stops := []int{sp.IMEnd}
	ends := []int{sp.IMEnd}
	if sp.EndOfText >= 0 {
		stops, ends = append(stops, sp.EndOfText), append(ends, sp.EndOfText)
	}
	if o.useTools {
		stops = append(stops, sp.ToolCallEnd)
	}
	sess, err := eng.Start(ctx, prompts, engine.Options{
		MaxNewTokens: o.budget, Temperature: o.temperature, TopP: o.topP, TopK: o.topK,
		StopIDs: stops, Seed: o.seed,
	})
	if err != nil {
		return nil, toolloop.Stats{}, fmt.Errorf("grpo: %w", err)
	}
	defer sess.Close()
	return toolloop.Run(ctx, sess, len(prompts), proto, tools, toolloop.Options{
		Budget: o.budget, MaxTurns: o.maxTurns, UseTools: o.useTools, EndIDs: ends, ToolCallEnd: sp.ToolCallEnd,
		Concurrency: max(o.concurrency, 1), ToolDeadline: time.Duration(o.toolDeadlineS * float64(time.Second)),
		Progress: o.progress,
	})
}

// writeSamples writes eval samples as JSONL to path, atomically.
func writeSamples(path string, samples []metrics.Sample) error {
	return atomicfile.Write(path, func(w io.Writer) error { return metrics.WriteSamples(w, samples...) })
}

// EvalRequest is what `mathrl eval` asks for.
type EvalRequest struct {
	Model       string // Hugging Face model folder (a checkpoint of a run is one)
	Data        string // dataset name, JSONL file or "arith"
	MaxPrompts  int    // first N problems (0: all)
	K           int
	Budget      int
	Scorer      string
	UseTools    bool
	MaxTurns    int
	Temperature float64
	TopP        float64
	Seed        uint64
	DType       string // compute dtype, as qwen3.ParseDType reads it: float32 (f32) or bfloat16 (bf16)
	Tokenizer   string // "" : the model folder's tokenizer.json; "bytes"
	Out         string // eval-samples JSONL file
	BatchSize   int
	Tools       toolloop.ToolRunner // nil: a sandbox pool
	Progress    io.Writer           // a line every 30 s while it samples (nil: none)
	ArithDigits int                 // Data "arith": largest operand length (0: the checkpoint run's, else 4)
	ArithOps    string              // Data "arith": operations, one of arith.Ops ("": the checkpoint run's, else "*+")
	// Engine samples the answers, as rollout_engine names it: builtin (in
	// process) or sglang / openai, servers at EngineURLs, which load Model
	// (the servers must see its folder at the same path) and sample
	// EngineBatch sequences a request (0: one each).
	Engine      string
	EngineURLs  []string
	EngineBatch int
}

// DefaultEvalRequest is what `mathrl eval` asks for unless told otherwise:
// the evaluation knobs of Default().
func DefaultEvalRequest() EvalRequest {
	d := Default()
	return EvalRequest{K: d.NSamplesPerEvalPrompt, Budget: d.EvalMaxResponseLen, Scorer: d.RMType, MaxTurns: d.MaxTurns,
		Temperature: d.EvalTemperature, TopP: d.EvalTopP, Seed: uint64(d.Seed), DType: d.DType, BatchSize: 64,
		Out: "eval-samples.jsonl", Engine: d.RolloutEngine}
}

// EvalDefaults is DefaultEvalRequest for the model folder model. When model
// is a checkpoint of a run, the seed and the batch size are that run's
// (seed, and the evaluation batch: sampling_batch_size when set), so that an
// evaluation of it samples as the run's own evaluations did, batch b at seed
// Seed + b; a different batch size regroups the samples and changes them.
func EvalDefaults(model string) (EvalRequest, error) {
	req := DefaultEvalRequest()
	cfg, ok, err := runConfig(model)
	if err != nil || !ok {
		return req, err
	}
	req.Seed, req.BatchSize = uint64(cfg.Seed), evalBatch(cfg)
	return req, nil
}

// runConfig returns the config of the run that wrote the checkpoint folder
// dir; ok is false when dir is no run's checkpoint (it has no
// trainer_state.json).
func runConfig(dir string) (cfg Config, ok bool, err error) {
	if _, err := os.Stat(filepath.Join(dir, stateFile)); errors.Is(err, os.ErrNotExist) {
		return Config{}, false, nil
	}
	st, err := readTrainState(dir)
	if err != nil {
		return Config{}, false, err
	}
	return st.Config, true, nil
}

// Validate reports the first field of req that RunEval cannot use, before any
// work is done.
func (req EvalRequest) Validate() error {
	switch {
	case req.Model == "":
		return errors.New("eval: no model")
	case req.Data == "":
		return errors.New("eval: no data")
	case req.K < 1:
		return fmt.Errorf("eval: %d samples per problem, want at least 1", req.K)
	case req.Budget < 1:
		return fmt.Errorf("eval: budget of %d tokens, want at least 1", req.Budget)
	case req.Out == "":
		return errors.New("eval: no output file")
	}
	if _, err := qwen3.ParseDType(req.DType); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	if err := scorer.Check(req.Scorer); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	var fe *engine.FieldError
	if err := engine.Check(req.engineConfig()); errors.As(err, &fe) {
		return fmt.Errorf("eval: --%s: %s", strings.ReplaceAll(fe.Key, "_", "-"), fe.Msg)
	} else if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	return nil
}

// engineConfig is what req says about the engine.
func (req EvalRequest) engineConfig() engine.Config {
	return engine.Config{Name: req.Engine, URLs: slices.Clone(req.EngineURLs), Batch: req.EngineBatch}
}

// RunEval loads a model, evaluates it and writes the samples; it returns the
// summary at k (avg@k, pass@k, truncation).
func RunEval(ctx context.Context, backend compute.Backend, req EvalRequest) (metrics.Summary, error) {
	if err := req.Validate(); err != nil {
		return metrics.Summary{}, err
	}
	eng, vocab, err := req.newEngine(backend)
	if err != nil {
		return metrics.Summary{}, err
	}
	if err := eng.Sync(ctx, 0); err != nil {
		return metrics.Summary{}, fmt.Errorf("eval: %w", err)
	}
	cfg, err := req.promptConfig()
	if err != nil {
		return metrics.Summary{}, err
	}
	proto, _, err := newProtocol(cfg, vocab)
	if err != nil {
		return metrics.Summary{}, err
	}
	problems, err := loadEvalSet(req.Data, req.MaxPrompts, req.Seed, cfg.arithTasks())
	if err != nil {
		return metrics.Summary{}, err
	}
	tools := req.Tools
	if req.UseTools && tools == nil {
		var closeTools func()
		if tools, closeTools, _, err = newToolRunner(Default()); err != nil {
			return metrics.Summary{}, err
		}
		defer closeTools()
	}
	samples, err := Evaluate(ctx, eng, proto, tools, EvalOptions{
		ModelName: req.Model, Problems: problems, K: req.K, Budget: req.Budget, Temperature: req.Temperature,
		TopP: req.TopP, Scorer: req.Scorer, UseTools: req.UseTools, MaxTurns: req.MaxTurns, Seed: req.Seed,
		BatchSize: req.BatchSize, Progress: req.Progress,
	})
	if err != nil {
		return metrics.Summary{}, err
	}
	if err := writeSamples(req.Out, samples); err != nil {
		return metrics.Summary{}, err
	}
	return metrics.Summarize(samples, req.K)
}

// newEngine returns the engine req asks for and the model's vocabulary size:
// in process, the model loaded on backend; on servers, a client that has
// them load the model's folder (whose weights are not loaded here).
func (req EvalRequest) newEngine(backend compute.Backend) (engine.Engine, int, error) {
	p := engine.Policy{Checkpoint: req.Model, Untied: refuseTied}
	if req.Engine == inprocess.Name {
		model, err := req.loadModel()
		if err != nil {
			return nil, 0, err
		}
		p.Vocab, p.Local = model.Config.VocabSize, inprocess.Local{Backend: backend, Model: model}
	} else {
		mc, err := qwen3.LoadConfig(req.Model)
		if err != nil {
			return nil, 0, fmt.Errorf("eval: %w", err)
		}
		p.Vocab = mc.VocabSize
	}
	eng, err := engine.New(req.engineConfig(), p)
	if err != nil {
		return nil, 0, fmt.Errorf("eval: %w", err)
	}
	return eng, p.Vocab, nil
}

// refuseTied is the Untied of an evaluated checkpoint: vLLM servers load the
// folder as it is, untied, or the evaluation stops, since its reload would
// leave a tied lm_head stale and nothing is written into the user's folder.
func refuseTied(dir string) (string, error) {
	cfg, err := qwen3.LoadConfig(dir)
	if err != nil {
		return "", err
	}
	if cfg.TieEmbeddings {
		return "", fmt.Errorf("%s has tied embeddings, which a vLLM server's reload leaves stale: evaluate an untied copy (mathrl model untie --model %s --out DIR)", dir, dir)
	}
	return dir, nil
}

// loadModel loads the model in the requested compute dtype.
func (req EvalRequest) loadModel() (*qwen3.Model, error) {
	dtype, err := qwen3.ParseDType(req.DType)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	return qwen3.Load(req.Model, dtype)
}

// promptConfig is the part of a Config that says how prompts are rendered and
// tasks generated: a checkpoint of a run renders them as that run did, unless
// the request says otherwise.
func (req EvalRequest) promptConfig() (Config, error) {
	cfg := Default()
	run, ok, err := runConfig(req.Model)
	if err != nil {
		return Config{}, fmt.Errorf("eval: %w", err)
	}
	if ok {
		cfg.SystemPrompt, cfg.OfferToolSpec = run.SystemPrompt, run.OfferToolSpec
		cfg.ArithMaxDigits, cfg.ArithOps = run.ArithMaxDigits, run.ArithOps
		if cfg.ArithOps == "" {
			cfg.ArithOps = Default().ArithOps
		}
	}
	if req.ArithDigits > 0 {
		cfg.ArithMaxDigits = req.ArithDigits
	}
	if req.ArithOps != "" {
		cfg.ArithOps = req.ArithOps
	}
	cfg.HFCheckpoint, cfg.Tokenizer, cfg.UseTools = req.Model, req.Tokenizer, req.UseTools
	return cfg, nil
}

// loadEvalSet loads the evaluation problems of spec (a dataset name, a JSONL
// file or "arith"), the first maxPrompts of them (0: all; arith: 64), as the
// trainer and `mathrl eval` both do. Generated tasks are drawn at
// evalSeed(seed).
func loadEvalSet(spec string, maxPrompts int, seed uint64, kind ArithTasks) ([]Problem, error) {
	n := maxPrompts
	if n == 0 {
		n = 64 // generated tasks: 64 unless asked
	}
	problems, err := loadProblems(spec, n, evalSeed(seed), kind)
	if err != nil {
		return nil, err
	}
	if maxPrompts > 0 && len(problems) > maxPrompts {
		problems = problems[:maxPrompts]
	}
	return problems, nil
}

// evalSeed is the seed of the generated evaluation tasks: far from the
// training tasks' seeds, so the two sets differ.
func evalSeed(seed uint64) uint64 { return seed + 1_000_003 }
