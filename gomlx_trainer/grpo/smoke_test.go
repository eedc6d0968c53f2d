package grpo

import (
	"fmt"
	"reflect"
	"testing"
)

func recipe(t *testing.T, name string) Config {
	t.Helper()
	c, err := LoadRecipe(name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSmokeSeedRecipes cuts both seed recipes on a tiny stand-in: every
// size capped, the optimizer steps per rollout kept, each cut listed.
func TestSmokeSeedRecipes(t *testing.T) {
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"math-grpo-qwen3-8b", []string{
			"num_rollout 120 -> 2", "rollout_batch_size 16 -> 4", "n_samples_per_prompt 8 -> 4",
			"rollout_max_response_len 4096 -> 64", "global_batch_size 128 -> 16",
			"n_samples_per_eval_prompt 4 -> 2", "eval_max_response_len 4096 -> 64", "eval_max_prompts 0 -> 4"}},
		{"retool-grpo-qwen3-4b", []string{
			"num_rollout 3000 -> 2", "rollout_batch_size 64 -> 4", "n_samples_per_prompt 16 -> 4",
			"rollout_max_response_len 8192 -> 64", "global_batch_size 256 -> 4",
			"n_samples_per_eval_prompt 16 -> 2", "eval_max_response_len 16384 -> 64", "eval_max_prompts 0 -> 4", "offer_tool_spec true -> false"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := recipe(t, tc.name)
			c.TinyModel = "tiny"
			s, changes := c.Smoke(nil)
			if got := fmt.Sprint(changes); got != fmt.Sprint(sorted(tc.want)) {
				t.Errorf("changes %v\nwant    %v", got, sorted(tc.want))
			}
			if s.StepsPerRollout() != c.StepsPerRollout() {
				t.Errorf("%d optimizer steps per rollout, the recipe takes %d", s.StepsPerRollout(), c.StepsPerRollout())
			}
			if err := s.Validate(); err != nil {
				t.Error(err)
			}
		})
	}
}

// sorted puts want in knob order, as Smoke lists its changes.
func sorted(want []string) []string {
	var out []string
	for _, k := range ConfigKeys() {
		for _, w := range want {
			if len(w) > len(k) && w[:len(k)+1] == k+" " {
				out = append(out, w)
			}
		}
	}
	return out
}

func TestSmokeLeavesAlone(t *testing.T) {
	demo := recipe(t, "demo")
	noTiny := recipe(t, "math-grpo-qwen3-8b")
	for name, c := range map[string]Config{"the demo (no tiny_model)": demo, "a real checkpoint (no tiny_model)": noTiny} {
		if s, changes := c.Smoke(nil); !reflect.DeepEqual(s, c) || changes != nil {
			t.Errorf("%s: changed %v", name, changes)
		}
	}
}

// TestSmokeKeeps checks that knobs set on the command line stay as set, and
// that the batches still divide.
func TestSmokeKeeps(t *testing.T) {
	c := recipe(t, "math-grpo-qwen3-8b")
	c.TinyModel = "tiny"
	s, _ := c.Smoke(map[string]bool{"rollout_max_response_len": true, "num_rollout": true, "n_samples_per_prompt": true})
	if s.RolloutMaxResponseLen != 4096 || s.NumRollout != 120 || s.NSamplesPerPrompt != 8 || s.EvalMaxResponseLen != 64 {
		t.Errorf("kept knobs changed, or the others did not: %+v", s)
	}
	if want := min(c.MicroBatchSize, 32); s.GlobalBatchSize != 32 || s.MicroBatchSize != want {
		t.Errorf("global batch %d, micro batch %d; want 32 (4 prompts x 8) and the recipe's %d", s.GlobalBatchSize, s.MicroBatchSize, want)
	}

	for _, tc := range []struct {
		name                   string
		prompts, group, global int
		micro                  int
		want                   [3]int // prompts, global batch, micro batch after Smoke
	}{
		// 3 steps: 4 prompts x 2 samples do not divide into them, 6 x 2 do
		{"prompts raised", 6, 2, 4, 2, [3]int{6, 4, 2}},
		// 2 steps of 8: micro-batches of 6 do not divide 8, of 4 do
		{"micro batch divides", 6, 8, 24, 6, [3]int{4, 8, 4}},
	} {
		c.RolloutBatchSize, c.NSamplesPerPrompt, c.GlobalBatchSize, c.MicroBatchSize = tc.prompts, tc.group, tc.global, tc.micro
		s, _ = c.Smoke(nil)
		if got := [3]int{s.RolloutBatchSize, s.GlobalBatchSize, s.MicroBatchSize}; got != tc.want {
			t.Errorf("%s: prompts, global and micro batch %v, want %v", tc.name, got, tc.want)
		}
		if err := s.Validate(); err != nil || s.StepsPerRollout() != c.StepsPerRollout() {
			t.Errorf("%s: %d steps per rollout (want %d), %v", tc.name, s.StepsPerRollout(), c.StepsPerRollout(), err)
		}
	}
}
