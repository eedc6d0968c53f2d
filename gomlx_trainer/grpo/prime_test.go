package grpo

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck // graph-building code reads better unqualified

	"github.com/mathrl/mathrl/gomlx_trainer/memplan"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// primeReference is testdata/prime_reference.json, written by
// testdata/prime_reference.py: the implicit PRM's loss and gradient and
// PRIME's leave-one-out advantages in plain float64 Python, the gradient
// checked there by finite differences.
type primeReference struct {
	Inputs struct {
		Logp, Ref, Mask [][]float32
		Outcome         []float64
		Group           int
	}
	Cases map[string]struct {
		Beta, Coef, Loss float64
		Grad             [][]float64
		Correct          float64
		Advantages       [][]float64
	}
}

func loadPrimeReference(t *testing.T) primeReference {
	t.Helper()
	return readReference[primeReference](t, "prime_reference.json")
}

// TestImplicitPRMLossAgainstReference checks ImplicitPRMLoss's value, its
// gradient with respect to the PRM's log-probs and its correct count
// against the Python reference, with a padding row of weight 0 appended
// (whose large log-probs must change nothing).
func TestImplicitPRMLossAgainstReference(t *testing.T) {
	ref := loadPrimeReference(t)
	in := ref.Inputs
	n := len(in.Mask)
	logp := append(append([][]float32{}, in.Logp...), []float32{5, 5, 5, 5, 5})
	refp := append(append([][]float32{}, in.Ref...), []float32{0, 0, 0, 0, 0})
	mask := make([][]float32, n+1)
	labels, rows := make([]float32, n+1), make([]float32, n+1)
	for i := range n {
		mask[i], labels[i], rows[i] = in.Mask[i], prmLabel(in.Outcome[i]), float32(1/float64(n))
	}
	mask[n], labels[n] = []float32{1, 1, 1, 1, 1}, 0
	for name, c := range ref.Cases {
		t.Run(name, func(t *testing.T) {
			exec := MustNewExec(testBackend(t), func(logp, ref, mask, labels, rows *Node) []*Node {
				loss, correct := ImplicitPRMLoss(logp, ref, mask, labels, rows, c.Beta)
				return []*Node{loss, correct, Gradient(loss, logp)[0]}
			})
			res := exec.MustCall(logp, refp, mask, labels, rows)
			loss, correct, grad := float64(res[0].Value().(float32)), float64(res[1].Value().(float32)), res[2].Value().([][]float32)
			if !near(loss, c.Loss, 1e-6) {
				t.Errorf("loss %.8f, reference %.8f", loss, c.Loss)
			}
			if correct != c.Correct {
				t.Errorf("%v rows on their label's side, reference %v", correct, c.Correct)
			}
			for i := range grad {
				for k := range grad[i] {
					want := 0.0
					if i < n {
						want = c.Grad[i][k]
					}
					if !near(float64(grad[i][k]), want, 1e-7) {
						t.Errorf("d loss/d logp[%d][%d] = %.8f, reference %.8f", i, k, grad[i][k], want)
					}
				}
			}
		})
	}
}

// TestImplicitAdvantagesAgainstReference checks ImplicitAdvantages against
// the Python reference's leave-one-out advantages (tool-response tokens, mask
// 0, get exactly 0).
func TestImplicitAdvantagesAgainstReference(t *testing.T) {
	ref := loadPrimeReference(t)
	in := ref.Inputs
	for name, c := range ref.Cases {
		t.Run(name, func(t *testing.T) {
			process := make([][]float64, len(in.Mask))
			for i := range process {
				process[i] = make([]float64, len(in.Mask[i]))
				for k, m := range in.Mask[i] {
					if m != 0 {
						process[i][k] = c.Beta * (float64(in.Logp[i][k]) - float64(in.Ref[i][k]))
					}
				}
			}
			adv, err := ImplicitAdvantages(process, in.Mask, in.Outcome, in.Group, c.Coef)
			if err != nil {
				t.Fatal(err)
			}
			for i := range adv {
				for k := range adv[i] {
					if in.Mask[i][k] == 0 && adv[i][k] != 0 {
						t.Errorf("tool token [%d][%d] has advantage %v", i, k, adv[i][k])
					}
					if !near(float64(adv[i][k]), c.Advantages[i][k], 1e-6) {
						t.Errorf("advantage [%d][%d] = %.7f, reference %.7f", i, k, adv[i][k], c.Advantages[i][k])
					}
				}
			}
		})
	}
}

// TestImplicitAdvantagesRefusals: broken groups and ragged rows are errors.
func TestImplicitAdvantagesRefusals(t *testing.T) {
	row := func(n int) ([]float64, []float32) { return make([]float64, n), make([]float32, n) }
	p3, m3 := row(3)
	p2, m2 := row(2)
	for name, c := range map[string]struct {
		process [][]float64
		masks   [][]float32
		outcome []float64
		group   int
		want    string
	}{
		"group of one":    {[][]float64{p3}, [][]float32{m3}, []float64{1}, 1, "groups of 1"},
		"partial group":   {[][]float64{p3, p3, p3}, [][]float32{m3, m3, m3}, []float64{1, 0, 1}, 2, "groups of 2"},
		"missing outcome": {[][]float64{p3, p3}, [][]float32{m3, m3}, []float64{1}, 2, "1 outcomes"},
		"ragged mask":     {[][]float64{p3, p3}, [][]float32{m3, m2}, []float64{1, 0}, 2, "sequence 1 has 3 rewards and 2 mask"},
		"ragged rewards":  {[][]float64{p2, p3}, [][]float32{m3, m3}, []float64{1, 0}, 2, "sequence 0 has 2 rewards and 3 mask"},
	} {
		if _, err := ImplicitAdvantages(c.process, c.masks, c.outcome, c.group, 1); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", name, err, c.want)
		}
	}
}

// primeConfig is smokeConfig with implicit process rewards, no warm start
// and no evaluation.
func primeConfig(t *testing.T) Config {
	cfg := smokeConfig(t)
	cfg.ProcessReward = "implicit"
	cfg.SFTSteps, cfg.EvalPromptData, cfg.EvalInterval = 0, "", 0
	return cfg
}

// TestTrainImplicitPRM trains the tiny model, in float32 and in bfloat16,
// on one rollout of one optimizer step with process_reward implicit under
// TestTrainFlowRL's reward (one correct sample per group): the step's loss
// and gradient norm must be finite and not 0, the PRM's metrics logged (its
// loss log 2, taken where the PRM is the reference and every implicit reward
// 0, and non-zero rewards after its update),
// and the PRM's weights, read back from the checkpoint, must have moved
// from the initial policy's while the policy's moved too.
func TestTrainImplicitPRM(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	for _, dtype := range []string{"float32", "bfloat16"} {
		t.Run(dtype, func(t *testing.T) { trainImplicitPRM(t, dtype) })
	}
}

func trainImplicitPRM(t *testing.T, dtype string) {
	cfg := primeConfig(t)
	cfg.DType = dtype
	cfg.NumRollout, cfg.SaveInterval = 1, 0
	cfg.GlobalBatchSize = cfg.Samples() // one PRM update, on the PRM as it starts
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	steps := trainFirstOfGroup(t, cfg)
	for _, m := range steps {
		t.Logf("step %d: loss %.4g, grad norm %.4g, prm loss %.6g, accuracy %.3g, reward mean %.3g", m.Step, m.Loss, m.GradNorm,
			m.Extra["prm_loss"], m.Extra["prm_accuracy"], m.Extra["prm_reward_mean"])
		if math.IsNaN(m.Loss+m.GradNorm) || math.IsInf(m.Loss+m.GradNorm, 0) || m.Loss == 0 || m.GradNorm <= 0 {
			t.Errorf("step %d: loss %v, grad norm %v", m.Step, m.Loss, m.GradNorm)
		}
		if got := m.Extra["prm_loss"]; !near(got, math.Ln2, 1e-6) {
			t.Errorf("step %d: prm_loss %v, want log 2 = %v (the PRM starts as the reference: every implicit reward 0)", m.Step, got, math.Ln2)
		}
		if r, ok := m.Extra["prm_reward_mean"]; !ok || r == 0 || math.IsNaN(r) {
			t.Errorf("step %d: prm_reward_mean %v (logged %v): the updated PRM must give non-zero rewards", m.Step, r, ok)
		}
	}
	initial, err := newPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(RunFolder(cfg.Save).CkptDir(), CheckpointName(len(steps)))
	final, _, err := LoadCheckpoint(dir, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	if moved := maxDiff(weightsOf(t, final), weightsOf(t, initial)); moved == 0 {
		t.Error("the policy's weights did not move")
	}
	prm, err := newPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := readPRM(filepath.Join(dir, prmFile), prm.Store); err != nil {
		t.Fatal(err)
	}
	if moved := maxDiff(weightsOf(t, prm), weightsOf(t, initial)); moved == 0 {
		t.Error("the PRM's weights did not move")
	}
	if same := maxDiff(weightsOf(t, prm), weightsOf(t, final)); same == 0 {
		t.Error("the PRM's weights are the policy's")
	}
}

// TestImplicitPRMResumeIsExact is TestFlowRLHeadResumeIsExact with
// process_reward implicit: the run resumed after its first rollout must end
// with the uninterrupted run's policy and PRM bit for bit, and the same
// train.jsonl.
func TestImplicitPRMResumeIsExact(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	straight := primeConfig(t)
	straight.NumRollout, straight.SaveInterval = 2, 0
	if err := straight.Validate(); err != nil {
		t.Fatal(err)
	}
	a, b := interruptAndResume(t, straight)
	for _, name := range []string{"model.safetensors", prmFile} {
		x, errA := os.ReadFile(filepath.Join(a, name))
		y, errB := os.ReadFile(filepath.Join(b, name))
		if errA != nil || errB != nil {
			t.Fatalf("%v, %v", errA, errB)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s: the resumed run's differs from the uninterrupted run's", name)
		}
	}
}

// TestMemoryPlanCountsImplicitPRM: with process_reward implicit the plan's
// resident memory holds the PRM (the policy's parameters again, with their
// moments, and in bfloat16 their float32 master) and the reference policy;
// without it neither.
func TestMemoryPlanCountsImplicitPRM(t *testing.T) {
	shape, err := qwen3.NamedConfig("tiny")
	if err != nil {
		t.Fatal(err)
	}
	p := shape.Params()
	for _, c := range []struct {
		process, dtype string
		want           int64
	}{
		{"none", "float32", 0},
		{"implicit", "float32", p * (4 + 4 + 4)},
		{"implicit", "bfloat16", p * (2 + 4 + 4 + 4)},
	} {
		cfg := Default()
		cfg.TinyModel, cfg.DType, cfg.PromptData, cfg.ProcessReward = "tiny", c.dtype, "arith", c.process
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		rc, err := cfg.MemoryRecipe()
		if err != nil {
			t.Fatal(err)
		}
		rep := memplan.Plan(shape, rc, 1<<40, memplan.CPU)
		if got := rep.Train.Term(memplan.TermPRM); got != c.want {
			t.Errorf("%s %s: the training step's PRM term is %d bytes, want %d", c.process, c.dtype, got, c.want)
		}
		if got, want := rep.Train.Term(memplan.TermReference) > 0, c.process == "implicit"; got != want {
			t.Errorf("%s %s: reference counted %v, want %v", c.process, c.dtype, got, want)
		}
	}
}

// TestPRMLabelIsRewardAboveZero: the PRM's outcome label is 1 for a
// positive reward only; a reward of exactly 0 (rm_type math's wrong answer,
// the reward most runs give) and a negative one (dapo's −1) are label 0.
func TestPRMLabelIsRewardAboveZero(t *testing.T) {
	for _, c := range []struct {
		reward float64
		want   float32
	}{{1, 1}, {0.5, 1}, {1e-9, 1}, {0, 0}, {math.Copysign(0, -1), 0}, {-1e-9, 0}, {-1, 0}} {
		if got := prmLabel(c.reward); got != c.want {
			t.Errorf("prmLabel(%v) = %v, want %v", c.reward, got, c.want)
		}
	}
}

// TestImplicitPRMCorrectCountsWeightedRowsOnly: ImplicitPRMLoss's correct
// count leaves out the rows of weight 0 (padding) even where their implicit
// reward falls on their label's side, and their loss counts for nothing.
// With β 1 and the reference 0, the rows' rewards s are 2, 2, −2 and 1:
// the first (label 1) is right, the second (label 0) wrong, and the last two
// (weight 0) would be right, so the count is 1 and the loss
// ½·softplus(−2) + ½·softplus(2).
func TestImplicitPRMCorrectCountsWeightedRowsOnly(t *testing.T) {
	logp := [][]float32{{1, 1}, {1, 1}, {-1, -1}, {0.5, 0.5}}
	ref := [][]float32{{0, 0}, {0, 0}, {0, 0}, {0, 0}}
	mask := [][]float32{{1, 1}, {1, 1}, {1, 1}, {1, 1}}
	labels, rows := []float32{1, 0, 0, 1}, []float32{0.5, 0.5, 0, 0}
	exec := MustNewExec(testBackend(t), func(logp, ref, mask, labels, rows *Node) []*Node {
		loss, correct := ImplicitPRMLoss(logp, ref, mask, labels, rows, 1)
		return []*Node{loss, correct}
	})
	res := exec.MustCall(logp, ref, mask, labels, rows)
	loss, correct := float64(res[0].Value().(float32)), float64(res[1].Value().(float32))
	softplus := func(x float64) float64 { return math.Log1p(math.Exp(x)) }
	if want := 0.5*softplus(-2) + 0.5*softplus(2); !near(loss, want, 1e-6) {
		t.Errorf("loss %.8f, want %.8f", loss, want)
	}
	if correct != 1 {
		t.Errorf("%v rows on their label's side, want 1 (the rows of weight 0 are not counted)", correct)
	}
}

// primeTrainer is a trainer holding what processAdvantages uses: cfg (its
// implicit PRM settings), a learner on the initial policy with the frozen
// reference, and the implicit PRM, a fresh copy of the initial policy.
func primeTrainer(t *testing.T, cfg Config) *trainer {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	b := testBackend(t)
	model, err := newPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := newPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l := NewLearnerWith(b, model, lossConfig(cfg), adamConfig(cfg), cfg.RolloutTemperature, modelOptions(cfg))
	l.WithReference(ref, cfg.RolloutTemperature)
	prm, err := newImplicitPRM(cfg, b, "")
	if err != nil {
		t.Fatal(err)
	}
	return &trainer{cfg: cfg, learner: l, prm: prm}
}

// primeSequences are cfg.Samples() sequences in groups of
// cfg.NSamplesPerPrompt with the given outcome rewards, each of six
// response tokens whose third and fourth are a tool response (mask 0), and
// each carrying a stale group advantage of 0.7.
func primeSequences(cfg Config, rewards []float64) []Sequence {
	seqs := make([]Sequence, len(rewards))
	for i := range seqs {
		seqs[i] = Sequence{Prompt: []int{256, 14 + i/cfg.NSamplesPerPrompt}, Response: []int{10 + i, 20, 30, 40 + i, 50, 60},
			Mask: []float32{1, 1, 0, 0, 1, 1}, LogProbs: make([]float32, 6), Advantage: 0.7, Reward: rewards[i]}
	}
	return seqs
}

// TestProcessAdvantagesReplaceTheGroupAdvantage: with prm_coef 0 PRIME's
// advantage is the leave-one-out outcome term alone, so processAdvantages
// must give each sampled token of sequence i exactly
// reward[i] − mean of its group's other rewards (worked out here by hand),
// the tool response 0, and Advantage 0 (the estimator's group advantage is
// replaced, not added). The PRM's logged accuracy is a fraction of the
// rollout's sequences, over two PRM updates here.
func TestProcessAdvantagesReplaceTheGroupAdvantage(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tiny model")
	}
	cfg := primeConfig(t)
	cfg.PRMCoef = 0
	rewards := []float64{1, 0, 0, 0, 1, 1, 0, -1}
	want := []float64{1, -1.0 / 3, -1.0 / 3, -1.0 / 3, 1, 1, -1.0 / 3, -5.0 / 3}
	if cfg.Samples() != len(rewards) || cfg.NSamplesPerPrompt != 4 || cfg.StepsPerRollout() != 2 {
		t.Fatalf("primeConfig: %d samples in groups of %d, %d steps; the test wants 8 in groups of 4, 2 steps",
			cfg.Samples(), cfg.NSamplesPerPrompt, cfg.StepsPerRollout())
	}
	tr := primeTrainer(t, cfg)
	out, err := tr.processAdvantages(primeSequences(cfg, rewards))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(rewards) {
		t.Fatalf("%d sequences back, want %d", len(out), len(rewards))
	}
	for i, s := range out {
		if s.Advantage != 0 {
			t.Errorf("sequence %d: Advantage %v, want 0 (PRIME's advantage is all in TokenAdvantages)", i, s.Advantage)
		}
		if len(s.TokenAdvantages) != len(s.Response) || len(s.RefLogProbs) != len(s.Response) {
			t.Fatalf("sequence %d: %d token advantages, %d reference log-probs, %d tokens", i, len(s.TokenAdvantages), len(s.RefLogProbs), len(s.Response))
		}
		for k, a := range s.TokenAdvantages {
			w := want[i]
			if s.Mask[k] == 0 {
				w = 0
			}
			if !near(float64(a), w, 1e-6) {
				t.Errorf("sequence %d token %d: advantage %v, want %v", i, k, a, w)
			}
		}
	}
	if tr.prmStats == nil {
		t.Fatal("no PRM statistics")
	}
	t.Logf("prm_loss %.6g, prm_accuracy %.4g, prm_reward_mean %.3g", tr.prmStats.loss, tr.prmStats.accuracy, tr.prmStats.rewardMean)
	if a := tr.prmStats.accuracy; a < 0 || a > 1 || math.IsNaN(a) {
		t.Errorf("prm_accuracy %v, want a fraction of the sequences", a)
	}
}

// TestImplicitPRMTrainsAtPRMLR: the PRM's optimizer steps take prm_lr, not
// learning_rate: at prm_lr 1e-12 one rollout's AdamW steps move no PRM
// weight by more than 1e-9 (an AdamW step moves a weight by about its
// learning rate), while at prm_lr 0, which means learning_rate (5e-4 here),
// they move some by more than 1e-5.
func TestImplicitPRMTrainsAtPRMLR(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tiny model")
	}
	rewards := []float64{1, 0, 0, 0, 1, 1, 0, 0}
	for _, c := range []struct {
		prmLR    float64
		min, max float64
	}{
		{1e-12, 0, 1e-9},
		{0, 1e-5, math.Inf(1)},
	} {
		cfg := primeConfig(t)
		cfg.PRMLR = c.prmLR
		if cfg.LR < 1e-4 {
			t.Fatalf("learning_rate %v: the test wants one that moves the weights by more than 1e-5", cfg.LR)
		}
		tr := primeTrainer(t, cfg)
		initial, err := newPolicy(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.processAdvantages(primeSequences(cfg, rewards)); err != nil {
			t.Fatal(err)
		}
		moved := maxDiff(weightsOf(t, tr.prm.learner.Model), weightsOf(t, initial))
		t.Logf("prm_lr %v: the PRM's weights moved by up to %g", c.prmLR, moved)
		if moved < c.min || moved > c.max {
			t.Errorf("prm_lr %v (learning_rate %v): the PRM's weights moved by up to %g, want within [%g, %g]", c.prmLR, cfg.LR, moved, c.min, c.max)
		}
	}
}
