package grpo

import (
	"errors"
	"fmt"
	"io/fs"
	"reflect"

	"github.com/mathrl/mathrl/data"
)

// smokeSample stands the built-in sample of the set called name in for the set
// when a smoke run (see Config.Smoke) does not find it, saying so in one line.
// Otherwise (a full run, another error, a set without a sample) it returns
// err, the error of loading the set.
func (t *trainer) smokeSample(name string, err error) ([]Problem, error) {
	rows, ok := data.Sample(name)
	if !t.cfg.smoke() || !ok || !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	t.log.Printf("smoke run: %s is not in %s, so it trains on the set's built-in %d-problem sample, in the same layout (`mathrl data pull --set %s` gets the set)",
		name, data.DefaultDir(), len(rows), name)
	return problemsOf(rows, name)
}

// smokeCaps are the largest sizes of a smoke run (see Config.Smoke): a
// second rollout after the first update, a group of 4 for each of 4 prompts,
// and 8 evaluation samples, all 64 tokens long, take a tiny model a minute or
// so on 2 CPU cores.
var smokeCaps = []struct {
	key string
	max int
}{
	{"num_rollout", 2},
	{"rollout_batch_size", 4},
	{"n_samples_per_prompt", 4},
	{"rollout_max_response_len", 64},
	{"eval_max_prompts", 4}, // 0 (all) counts as more
	{"n_samples_per_eval_prompt", 2},
	{"eval_max_response_len", 64},
}

// Change is one knob that Config.Smoke changed.
type Change struct {
	Key      string // recipe key
	From, To any
}

// String writes "rollout_max_response_len 4096 -> 64".
func (ch Change) String() string { return fmt.Sprintf("%s %v -> %v", ch.Key, ch.From, ch.To) }

// Smoke cuts c down to a smoke run when tiny_model stands in for the
// checkpoint named by hf_checkpoint: a seed recipe run on a random tiny model
// checks the recipe end to end, and at the recipe's sizes (4k-token budgets
// that a random model always fills, 500-problem evaluations) it would take
// hours on a CPU. A recipe without hf_checkpoint (the CPU demo) is sized for
// its tiny model already and is returned as it is.
//
// Smoke caps the knobs of smokeCaps, then sets global_batch_size so that a
// rollout still takes the recipe's number of optimizer steps (raising
// rollout_batch_size if it must, to divide evenly) and cuts micro_batch_size to
// the largest divisor of it. It turns offer_tool_spec off: the spec makes every
// prompt over 1,000 tokens (4 times the longest with the byte vocabulary),
// which a random model cannot read anyway; the tools still run. Knobs in keep
// (those set on the command line) are left alone. It returns the new config
// and what changed, in knob order.
func (c Config) Smoke(keep map[string]bool) (Config, []Change) {
	if !c.smoke() {
		return c, nil
	}
	steps := 1
	if c.GlobalBatchSize > 0 {
		steps = max(c.StepsPerRollout(), 1)
	}
	s := c
	for _, cp := range smokeCaps {
		p := knobsByKey()[cp.key].Ptr(&s).(*int)
		if !keep[cp.key] && (*p > cp.max || *p == 0 && cp.key == "eval_max_prompts") {
			*p = cp.max
		}
	}
	s.smokeBatches(steps, keep)
	if !keep["offer_tool_spec"] && s.UseTools {
		s.OfferToolSpec = false
	}
	return s, changes(c, s)
}

// smoke reports whether c is a smoke run: tiny_model stands in for hf_checkpoint.
func (c Config) smoke() bool { return c.TinyModel != "" && c.HFCheckpoint != "" }

// smokeBatches sets global_batch_size to a rollout's samples / steps and
// micro_batch_size to the largest divisor of it that is no larger than before.
func (c *Config) smokeBatches(steps int, keep map[string]bool) {
	for !keep["rollout_batch_size"] && c.Samples()%steps != 0 {
		c.RolloutBatchSize++
	}
	if !keep["global_batch_size"] && c.Samples()%steps == 0 {
		c.GlobalBatchSize = c.Samples() / steps
	}
	if !keep["micro_batch_size"] && c.MicroBatchSize > 0 && c.GlobalBatchSize > 0 {
		m := min(c.MicroBatchSize, c.GlobalBatchSize)
		for c.GlobalBatchSize%m != 0 {
			m--
		}
		c.MicroBatchSize = m
	}
}

// changes lists the knobs whose values differ between a and b, in knob order.
func changes(a, b Config) []Change {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	var out []Change
	for _, k := range Knobs() {
		x, y := va.Field(k.Index).Interface(), vb.Field(k.Index).Interface()
		if !reflect.DeepEqual(x, y) {
			out = append(out, Change{Key: k.Key, From: x, To: y})
		}
	}
	return out
}
