package grpo

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/gomlx/compute"

	"github.com/mathrl/mathrl/gomlx_trainer/engine"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/gomlx_trainer/tokenizer"
)

// Teacher is what on-policy distillation asks of a teacher: for each
// sequence, the log-prob under the teacher of each response token given the
// tokens before it (one entry per response token, 0 where Mask is 0), in
// micro-batches cut as o says. A Learner of the teacher's model (the
// in-process teacher) is one; servedTeacher asks servers.
type Teacher interface {
	SequenceLogProbs(seqs []Sequence, o StepOptions) ([][]float32, error)
}

// newTeacher returns cfg's teacher, whose tokenizer checkTeacher has
// found the policy's: with teacher_engine builtin its model loaded
// from teacher on b, in cfg's dtype, scoring at the rollout temperature as
// the policy's log-probs are; with sglang a client of teacher_urls.
func newTeacher(cfg Config, b compute.Backend, log *progress) (Teacher, error) {
	if cfg.TeacherEngine == engine.SGLang {
		log.Printf("teacher %s: served by %v", cfg.Teacher, cfg.TeacherURLs)
		return newServedTeacher(cfg)
	}
	dtype, err := qwen3.ParseDType(cfg.DType)
	if err != nil {
		return nil, fmt.Errorf("grpo: config dtype: %w", err)
	}
	model, err := qwen3.Load(cfg.Teacher, dtype)
	if err != nil {
		return nil, fmt.Errorf("grpo: config teacher: %w", err)
	}
	log.Printf("teacher %s: %d parameters, in process", cfg.Teacher, model.Config.Params())
	return NewLearnerWith(b, model, LossConfig{}, AdamWConfig{}, cfg.RolloutTemperature, modelOptions(cfg)), nil
}

// checkTeacher refuses a teacher that does not share the policy's
// tokenizer: its config.json's vocabulary size must be the policy's, and its
// tokenizer (its folder's tokenizer.json, or bytes for a random stand-in of
// fewer than 1000 ids, as for tiny_model) must have the policy's tokens,
// added tokens and special ids. The error names both. Without a teacher it
// returns nil.
func checkTeacher(cfg Config, policyVocab int) error {
	if cfg.Teacher == "" {
		return nil
	}
	tc, err := qwen3.LoadConfig(cfg.Teacher)
	if err != nil {
		return fmt.Errorf("grpo: config teacher %s: %w", cfg.Teacher, err)
	}
	if tc.VocabSize != policyVocab {
		return teacherMismatch(cfg, fmt.Sprintf("its vocabulary has %d ids, the policy's %d", tc.VocabSize, policyVocab))
	}
	teacherSpec, err := teacherTokenizer(cfg.Teacher, tc.VocabSize)
	if err != nil {
		return err
	}
	pt, _, err := tokenizer.Open(policyTokenizer(cfg, policyVocab))
	if err != nil {
		return fmt.Errorf("grpo: %w", err)
	}
	tt, _, err := tokenizer.Open(teacherSpec)
	if err != nil {
		return fmt.Errorf("grpo: config teacher: %w", err)
	}
	if diff := tokenizerDiff(pt, tt); diff != "" {
		return teacherMismatch(cfg, diff)
	}
	return nil
}

// checkTeacherShape is checkTeacher for the policy of cfg's shape
// (PolicyShape: its config.json, or tiny_model's built-in shape), so that a
// run refuses a teacher before any weights load.
func checkTeacherShape(cfg Config) error {
	if cfg.Teacher == "" {
		return nil
	}
	policy, _, err := cfg.PolicyShape()
	if err != nil {
		return fmt.Errorf("grpo: config teacher: the policy's vocabulary: %w", err)
	}
	return checkTeacher(cfg, policy.VocabSize)
}

// teacherMismatch is checkTeacher's error: both models named, then what
// differs.
func teacherMismatch(cfg Config, detail string) error {
	return fmt.Errorf("grpo: config teacher: teacher %s and policy %s do not share a tokenizer: %s (on-policy distillation "+
		"scores the student's token ids under the teacher)", cfg.Teacher, modelName(cfg), detail)
}

// teacherTokenizer is the tokenizer spec of the teacher folder dir: its
// tokenizer.json, else bytes when its vocabulary has fewer than 1000 ids.
func teacherTokenizer(dir string, vocab int) (string, error) {
	path := filepath.Join(dir, "tokenizer.json")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if vocab < 1000 {
		return "bytes", nil
	}
	return "", fmt.Errorf("grpo: config teacher %s: no tokenizer.json to check against the policy's", dir)
}

// tokenizerDiff describes the first difference between the policy's
// tokenizer a and the teacher's b (vocabulary size, added tokens, then the
// token of each id), or returns "" when they agree.
func tokenizerDiff(a, b *tokenizer.Tokenizer) string {
	if a.VocabSize() != b.VocabSize() {
		return fmt.Sprintf("the tokenizers have %d ids (policy) and %d (teacher)", a.VocabSize(), b.VocabSize())
	}
	addedA, addedB := a.AddedTokens(), b.AddedTokens()
	if len(addedA) != len(addedB) {
		return fmt.Sprintf("the tokenizers have %d added tokens (policy) and %d (teacher)", len(addedA), len(addedB))
	}
	for i, x := range addedA {
		if y := addedB[i]; x.ID != y.ID || x.Content != y.Content || x.Special != y.Special {
			return fmt.Sprintf("added token %d is %q (id %d, special %v) in the policy's tokenizer, %q (id %d, special %v) in the teacher's",
				i, x.Content, x.ID, x.Special, y.Content, y.ID, y.Special)
		}
	}
	for id := range a.VocabSize() {
		x, okA := a.Token(id)
		y, okB := b.Token(id)
		if x != y || okA != okB {
			return fmt.Sprintf("id %d is %q in the policy's tokenizer, %q in the teacher's", id, x, y)
		}
	}
	return ""
}

// distill gives seqs their distillation advantages (distillSequences) from
// the teacher's log-probs of their sampled tokens, computed in the
// micro-batches of the optimizer steps that train on them. Without a
// teacher it returns seqs.
func (t *trainer) distill(seqs []Sequence) ([]Sequence, error) {
	if t.teacher == nil || len(seqs) == 0 {
		return seqs, nil
	}
	teacher := make([][]float32, 0, len(seqs))
	for _, part := range stepParts(seqs, t.cfg.GlobalBatchSize) {
		lp, err := t.teacher.SequenceLogProbs(part, t.stepOptions(0))
		if err != nil {
			return nil, fmt.Errorf("grpo: teacher log-probs: %w", err)
		}
		teacher = append(teacher, lp...)
	}
	return distillSequences(seqs, teacher, t.cfg.DistillCoef, t.cfg.DistillOutcomeCoef), nil
}

// distillSequences returns copies of seqs with the advantages of on-policy
// distillation, teacher[i][k] being the teacher's log-prob of response token
// k of sequence i:
//
//	A_i,k = outcomeCoef·A_i + coef·(teacher_i,k − logp_i,k)
//
// where logp are the sequences' LogProbs (the old policy's, the student's
// own; no gradient reaches them) and teacher − logp is the negative of the
// reverse-KL estimate log π_student − log π_teacher at the sampled token.
// Advantage becomes outcomeCoef·A_i, TokenAdvantages the second term (0
// where Mask is 0: tool responses and glue get no advantage), and
// TeacherLogProbs teacher[i].
//
// For example, a sampled token the student gave log-prob −2 and the teacher
// −0.5 gets coef·1.5: the student is pushed toward what the teacher prefers.
func distillSequences(seqs []Sequence, teacher [][]float32, coef, outcomeCoef float64) []Sequence {
	out := make([]Sequence, len(seqs))
	for i, s := range seqs {
		out[i] = s
		out[i].Advantage = outcomeCoef * s.Advantage
		out[i].TeacherLogProbs = teacher[i]
		out[i].TokenAdvantages = make([]float32, len(s.Response))
		for k := range s.Response {
			if s.Mask[k] != 0 {
				out[i].TokenAdvantages[k] = float32(coef * float64(teacher[i][k]-s.LogProbs[k]))
			}
		}
	}
	return out
}

// reverseKL is the mean over the sampled tokens of seqs (Mask non-zero) of
// log π_student − log π_teacher (LogProbs − TeacherLogProbs), the per-token
// estimate of KL(π_student‖π_teacher) that distillation lowers; ok is false
// when no sequence has teacher log-probs or no token is sampled.
func reverseKL(seqs []Sequence) (kl float64, ok bool) {
	var sum, n float64
	for _, s := range seqs {
		if s.TeacherLogProbs == nil {
			continue
		}
		for k, m := range s.Mask {
			if m != 0 {
				sum += float64(s.LogProbs[k] - s.TeacherLogProbs[k])
				n++
			}
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / n, true
}
