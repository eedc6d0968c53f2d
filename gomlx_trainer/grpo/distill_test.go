package grpo

import (
	"bytes"
	"context"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck

	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/gomlx_trainer/serve"
	"github.com/mathrl/mathrl/gomlx_trainer/tokenizer"
)

// distillReference is testdata/distill_reference.json, written by
// testdata/distill_reference.py: on-policy distillation's advantages, loss
// and gradient in plain float64 Python, the gradient checked there by finite
// differences.
type distillReference struct {
	Inputs struct {
		Logp, Old, Teacher, Mask [][]float32
		Adv                      []float32
	}
	ReverseKL float64 `json:"reverse_kl"`
	Cases     map[string]struct {
		KLCoef      float64 `json:"kl_coef"`
		OutcomeCoef float64 `json:"outcome_coef"`
		Weights     string
		EpsLow      float64 `json:"eps_low"`
		EpsHigh     float64 `json:"eps_high"`
		Advantages  [][]float64
		Loss        float64
		Grad        [][]float64
	}
}

func loadDistillReference(t *testing.T) distillReference {
	t.Helper()
	return readReference[distillReference](t, "distill_reference.json")
}

// TestDistillAgainstReference checks distillSequences' advantages, the mean
// reverse KL and PolicyLoss's loss and gradient with token advantages against
// the Python reference.
func TestDistillAgainstReference(t *testing.T) {
	ref := loadDistillReference(t)
	in := ref.Inputs
	seqs := make([]Sequence, len(in.Mask))
	for i := range seqs {
		seqs[i] = Sequence{Prompt: []int{0}, Response: []int{1, 2, 3, 4}, Mask: in.Mask[i], LogProbs: in.Old[i], Advantage: float64(in.Adv[i])}
	}
	for name, c := range ref.Cases {
		t.Run(name, func(t *testing.T) {
			got := distillSequences(seqs, in.Teacher, c.KLCoef, c.OutcomeCoef)
			adv, tokAdv := make([]float32, len(got)), make([][]float32, len(got))
			for i, s := range got {
				adv[i], tokAdv[i] = float32(s.Advantage), s.TokenAdvantages
				for k := range s.Response {
					if a := s.Advantage + float64(s.TokenAdvantages[k]); !near(a, c.Advantages[i][k], 1e-6) {
						t.Errorf("advantage [%d][%d] = %v, reference %v", i, k, a, c.Advantages[i][k])
					}
				}
			}
			if kl, ok := reverseKL(got); !ok || !near(kl, ref.ReverseKL, 1e-6) {
				t.Errorf("reverse KL %v (ok %v), reference %v", kl, ok, ref.ReverseKL)
			}
			exec := MustNewExec(testBackend(t), func(logp, old, adv, tokAdv, w *Node) []*Node {
				out := PolicyLoss(LossInputs{LogProbs: logp, OldLogProbs: old, Advantages: adv, TokenAdvantages: tokAdv, Weights: w},
					LossConfig{EpsLow: c.EpsLow, EpsHigh: c.EpsHigh})
				return []*Node{out.Loss, Gradient(out.Loss, logp)[0]}
			})
			res := exec.MustCall(in.Logp, in.Old, adv, tokAdv, TokenWeights(in.Mask, c.Weights == "token_mean"))
			loss, grad := float64(res[0].Value().(float32)), res[1].Value().([][]float32)
			if !near(loss, c.Loss, 1e-5) {
				t.Errorf("loss %.7f, reference %.7f", loss, c.Loss)
			}
			for i := range grad {
				for k := range grad[i] {
					if !near(float64(grad[i][k]), c.Grad[i][k], 1e-5) {
						t.Errorf("d loss/d logp[%d][%d] = %.7f, reference %.7f", i, k, grad[i][k], c.Grad[i][k])
					}
				}
			}
		})
	}
}

// saveTeacher writes a random Qwen3 of the built-in shape name, its
// vocabulary set to vocab, as a Hugging Face folder, and returns the folder.
func saveTeacher(t *testing.T, name string, vocab int, seed uint64) string {
	t.Helper()
	mc, err := qwen3.NamedConfig(name)
	if err != nil {
		t.Fatal(err)
	}
	mc.VocabSize = vocab
	m, err := qwen3.NewRandom(mc, dtypes.Float32, seed)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "teacher-"+name)
	if err := m.Save(dir, "F32"); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestTeacherTokenizerMismatch checks that a teacher whose vocabulary size
// or tokenizer differs from the policy's is refused with both named, and
// that a matching one is taken.
func TestTeacherTokenizerMismatch(t *testing.T) {
	cfg := Default()
	cfg.TinyModel = "tiny" // 300 ids, the byte-level tokenizer
	policy, err := qwen3.NamedConfig("tiny")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Teacher = saveTeacher(t, "tiny-4l", policy.VocabSize, 2)
	if err := checkTeacher(cfg, policy.VocabSize); err != nil {
		t.Fatalf("a teacher of the same tokenizer: %v", err)
	}

	otherVocab := saveTeacher(t, "tiny", policy.VocabSize+4, 2)
	renamed := saveTeacher(t, "tiny", policy.VocabSize, 3)
	_, data, err := tokenizer.Open("bytes")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte("<|im_end|>")) {
		t.Fatal("the byte-level tokenizer has no <|im_end|> to rename")
	}
	data = bytes.ReplaceAll(data, []byte("<|im_end|>"), []byte("<|im_fin|>"))
	if err := os.WriteFile(filepath.Join(renamed, "tokenizer.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, dir, want string }{
		{"vocabulary size", otherVocab, "vocabulary has 304 ids, the policy's 300"},
		{"special token", renamed, "<|im_fin|>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg.Teacher = tc.dir
			err := checkTeacher(cfg, policy.VocabSize)
			if err == nil {
				t.Fatal("checkTeacher accepted a teacher of another tokenizer")
			}
			for _, want := range []string{"teacher " + tc.dir, "policy random tiny", "do not share a tokenizer", tc.want} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
}

// TestDistillMovesStudentTowardTeacher takes optimizer steps of pure
// distillation on fixed sequences of random tokens, a span of each masked
// out as a tool response, and checks that the student's log-probs of the
// sampled tokens come closer to the teacher's (a larger model of the same
// vocabulary), step after step, while the masked tokens get no advantage.
func TestDistillMovesStudentTowardTeacher(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	b := testBackend(t)
	mc, err := qwen3.NamedConfig("tiny")
	if err != nil {
		t.Fatal(err)
	}
	student, err := qwen3.NewRandom(mc, dtypes.Float32, 1)
	if err != nil {
		t.Fatal(err)
	}
	teacherModel, err := qwen3.Load(saveTeacher(t, "tiny-4l", mc.VocabSize, 9), dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	adam := AdamWConfig{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, ClipNorm: 1, Precision: PrecisionOf(Default())}
	learner := NewLearner(b, student, LossConfig{EpsLow: 0.2, EpsHigh: 0.28}, adam, 1)
	teacher := NewLearner(b, teacherModel, LossConfig{}, AdamWConfig{}, 1)
	rng := rand.New(rand.NewPCG(3, 4))
	seqs := make([]Sequence, 4)
	for i := range seqs {
		s := Sequence{Prompt: make([]int, 5), Response: make([]int, 12), Mask: make([]float32, 12), LogProbs: make([]float32, 12)}
		for k := range s.Prompt {
			s.Prompt[k] = rng.IntN(mc.VocabSize)
		}
		for k := range s.Response {
			s.Response[k] = rng.IntN(mc.VocabSize)
			s.Mask[k] = 1
		}
		s.Mask[5], s.Mask[6] = 0, 0 // a tool response
		seqs[i] = s
	}
	o := StepOptions{PerTokenLoss: true, LR: 1e-3, OnPolicy: true}
	gaps := make([]float64, 0, 5)
	for step := range 5 {
		old, err := learner.SequenceLogProbs(seqs, o)
		if err != nil {
			t.Fatal(err)
		}
		teach, err := teacher.SequenceLogProbs(seqs, o)
		if err != nil {
			t.Fatal(err)
		}
		for i := range seqs {
			seqs[i].LogProbs = old[i]
		}
		distilled := distillSequences(seqs, teach, 1, 0)
		gaps = append(gaps, squaredGap(distilled))
		for i, s := range distilled {
			if s.TokenAdvantages[5] != 0 || s.TokenAdvantages[6] != 0 {
				t.Fatalf("sequence %d: masked tokens got advantages %v, %v", i, s.TokenAdvantages[5], s.TokenAdvantages[6])
			}
		}
		if step == 4 {
			break
		}
		ss, _, err := learner.Step(distilled, o)
		if err != nil {
			t.Fatal(err)
		}
		if math.IsNaN(ss.Loss) || ss.Tokens != 40 {
			t.Fatalf("step %d: loss %v over %v tokens, want finite over 40", step+1, ss.Loss, ss.Tokens)
		}
	}
	t.Logf("mean squared gap log π_student − log π_teacher per step: %v", gaps)
	for i := 1; i < len(gaps); i++ {
		if gaps[i] >= gaps[i-1] {
			t.Errorf("step %d: squared gap %v, not below the step before's %v (all: %v)", i, gaps[i], gaps[i-1], gaps)
		}
	}
}

// squaredGap is the mean over the sampled tokens of (log π_student −
// log π_teacher)², which distillation on fixed sequences lowers.
func squaredGap(seqs []Sequence) float64 {
	var sum, n float64
	for _, s := range seqs {
		for k, m := range s.Mask {
			if m != 0 {
				d := float64(s.LogProbs[k] - s.TeacherLogProbs[k])
				sum += d * d
				n++
			}
		}
	}
	return sum / n
}

// TestTrainWithTeacher runs two rollouts of pure distillation from a tiny
// policy toward a larger random teacher of its vocabulary, loaded in
// process or served by mathrl serve, and checks that every step logs a
// finite loss and the reverse KL, and that the trained sequences carry
// token advantages and no outcome advantage.
func TestTrainWithTeacher(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	for _, engineName := range TeacherEngines() {
		t.Run(engineName, func(t *testing.T) {
			cfg := smokeConfig(t)
			mc, err := qwen3.NamedConfig(cfg.TinyModel)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Teacher, cfg.TeacherEngine = saveTeacher(t, "tiny-4l", mc.VocabSize, 5), engineName
			if engineName != "builtin" {
				cfg.TeacherURLs = []string{serveOnLoopback(t, serve.Options{Backend: testBackend(t), ModelPath: cfg.Teacher, DType: dtypes.Float32, MaxBatch: 2})}
			}
			cfg.SFTSteps, cfg.EvalPromptData, cfg.LR = 0, "", 1e-3
			var rollouts []RolloutLog
			var log testLog
			err = Train(context.Background(), cfg, TrainOptions{Backend: testBackend(t), Tools: arithTools{}, Progress: &log,
				OnRollout: func(r RolloutLog) { rollouts = append(rollouts, r) }})
			if err != nil {
				t.Fatalf("%v\n%s", err, log)
			}
			if len(rollouts) != 2 {
				t.Fatalf("%d rollouts, want 2", len(rollouts))
			}
			var kls []float64
			for _, r := range rollouts {
				for _, s := range r.Steps {
					kl, ok := s.Extra["distill_reverse_kl"]
					if !ok || math.IsNaN(s.Loss) || math.IsInf(s.Loss, 0) {
						t.Fatalf("step %d: loss %v, distill_reverse_kl %v (logged %v)", s.Step, s.Loss, kl, ok)
					}
					kls = append(kls, kl)
				}
				for _, q := range r.Sequences {
					if q.TokenAdvantages == nil || q.Advantage != 0 {
						t.Fatalf("a trained sequence has token advantages %v and outcome advantage %v; want some and 0", q.TokenAdvantages != nil, q.Advantage)
					}
				}
			}
			t.Logf("distill_reverse_kl per step: %v", kls)
			if !strings.Contains(log.String(), "teacher "+cfg.Teacher) {
				t.Errorf("the log does not name the teacher:\n%s", log)
			}
		})
	}
}

// TestServedTeacherEqualsInProcess serves a teacher with mathrl serve and
// checks that its log-probs of sampled responses (SGLang's scoring request:
// max_new_tokens 0, return_logprob, logprob_start_len at the response) are
// the in-process teacher's, float32 for float32, one sequence at a time as
// the server scores them, at temperature 1 and 0.7; masked tokens get 0.
func TestServedTeacherEqualsInProcess(t *testing.T) {
	b := testBackend(t)
	mc, err := qwen3.NamedConfig("tiny")
	if err != nil {
		t.Fatal(err)
	}
	dir := saveTeacher(t, "tiny-4l", mc.VocabSize, 11)
	url := serveOnLoopback(t, serve.Options{Backend: b, ModelPath: dir, DType: dtypes.Float32, MaxBatch: 2})
	model, err := qwen3.Load(dir, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	var seqs []Sequence
	for _, n := range []int{3, 17, 40} {
		s := Sequence{Prompt: []int{rng.IntN(300), rng.IntN(300), rng.IntN(300)}, Response: make([]int, n), Mask: make([]float32, n),
			LogProbs: make([]float32, n)}
		for k := range s.Response {
			s.Response[k], s.Mask[k] = rng.IntN(300), 1
		}
		s.Mask[n/2] = 0
		seqs = append(seqs, s)
	}
	for _, temperature := range []float64{1, 0.7} {
		cfg := Default()
		cfg.Teacher, cfg.TeacherEngine, cfg.TeacherURLs, cfg.RolloutTemperature = dir, "sglang", []string{url}, temperature
		served, err := newServedTeacher(cfg)
		if err != nil {
			t.Fatal(err)
		}
		local := NewLearner(b, model, LossConfig{}, AdamWConfig{}, temperature)
		got, err := served.SequenceLogProbs(seqs, StepOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range seqs {
			want, err := local.SequenceLogProbs([]Sequence{s}, StepOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for k := range s.Response {
				if got[i][k] != want[0][k] {
					t.Errorf("temperature %g, sequence %d, token %d: served %v, in process %v", temperature, i, k, got[i][k], want[0][k])
				}
			}
			if got[i][len(s.Response)/2] != 0 {
				t.Errorf("sequence %d: a masked token has the log-prob %v, want 0", i, got[i][len(s.Response)/2])
			}
		}
	}
}

// TestServedScoringRefusals checks that a bad scoring request is answered
// 400 with the field named.
func TestServedScoringRefusals(t *testing.T) {
	mc, err := qwen3.NamedConfig("tiny")
	if err != nil {
		t.Fatal(err)
	}
	dir := saveTeacher(t, "tiny", mc.VocabSize, 1)
	url := serveOnLoopback(t, serve.Options{Backend: testBackend(t), ModelPath: dir, DType: dtypes.Float32, MaxBatch: 2})
	for _, tc := range []struct{ name, body, want string }{
		{"start past the input", `{"input_ids":[1,2,3],"return_logprob":true,"logprob_start_len":3,"sampling_params":{"max_new_tokens":0}}`,
			"logprob_start_len: 3 is outside [0, 3)"},
		{"negative start", `{"input_ids":[1,2,3],"return_logprob":true,"logprob_start_len":-2,"sampling_params":{"max_new_tokens":0}}`,
			"logprob_start_len: -2 is outside"},
		{"start with sampling", `{"input_ids":[1,2,3],"return_logprob":true,"logprob_start_len":1,"sampling_params":{"max_new_tokens":4}}`,
			"logprob_start_len: input log-probs are served with sampling_params.max_new_tokens 0, not 4"},
		{"no log-probs asked", `{"input_ids":[1,2,3],"logprob_start_len":1,"sampling_params":{"max_new_tokens":0}}`,
			"return_logprob: false"},
		{"zero temperature", `{"input_ids":[1,2,3],"return_logprob":true,"logprob_start_len":1,"sampling_params":{"max_new_tokens":0,"temperature":0}}`,
			"sampling_params.temperature: 0"},
		{"id outside the vocabulary", `{"input_ids":[1,2,999],"return_logprob":true,"logprob_start_len":1,"sampling_params":{"max_new_tokens":0}}`,
			"input_ids[2]: id 999 outside the vocabulary"},
		{"a batch", `{"input_ids":[[1,2],[3,4]],"return_logprob":true,"logprob_start_len":1,"sampling_params":{"max_new_tokens":0}}`,
			"logprob_start_len: input log-probs are served for one sequence per request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := http.Post(url+"/generate", "application/json", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), tc.want) {
				t.Errorf("status %d, body %s; want 400 saying %q", resp.StatusCode, body, tc.want)
			}
		})
	}
}
