package modelcard

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const cardsDir = "../../results/model_cards"

// TestPublishedNumbers checks the committed CSV files against the numbers the
// two cards print (Qwen3-8B percentages divided by 100).
func TestPublishedNumbers(t *testing.T) {
	cards, err := Load(cardsDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(cards) != 2 || cards[0].ID != "math-grpo-qwen3-8b" || cards[1].ID != "retool-grpo-qwen3-4b" {
		t.Fatalf("cards = %v", cards)
	}
	b8, b4 := cards[0], cards[1]

	bench := map[string]float64{}
	for _, b := range b4.Benchmarks {
		bench[b.Benchmark] = b.Value
	}
	for name, want := range map[string]float64{"AIME 2024": 0.581, "AIME 2025": 0.498, "MATH-500": 0.956} {
		if bench[name] != want {
			t.Errorf("4B card %s = %v, want %v", name, bench[name], want)
		}
	}
	wantBudgets := []BudgetRow{{BudgetTokens: 4096, AvgAt16: 0.2896, TruncationRate: 0.485},
		{BudgetTokens: 8192, AvgAt16: 0.3406, TruncationRate: 0.21}, {BudgetTokens: 16384, AvgAt16: 0.3427, TruncationRate: 0.006}}
	if len(b8.Budgets) != len(wantBudgets) {
		t.Fatalf("8B budget rows = %d", len(b8.Budgets))
	}
	for i, w := range wantBudgets {
		g := b8.Budgets[i]
		if g.BudgetTokens != w.BudgetTokens || g.AvgAt16 != w.AvgAt16 || g.TruncationRate != w.TruncationRate {
			t.Errorf("8B budget row %d = %+v, want %+v", i, g, w)
		}
	}
	tp := map[string]int{}
	for _, s := range b8.Scorers {
		if s.Labels != 300 {
			t.Errorf("8B scorer %s labels = %d", s.Scorer, s.Labels)
		}
		tp[s.Scorer] = s.TP
	}
	if tp["math"] != 300 || tp["dapo"] != 202 || tp["deepscaler"] != 0 || len(tp) != 3 {
		t.Errorf("8B scorer TP = %v, want math 300 dapo 202 deepscaler 0", tp)
	}
	for _, c := range []struct {
		card      Card
		key, want string
	}{
		{b4, "base_model", "Qwen3-4B-Instruct-2507"}, {b4, "prompts_per_rollout", "64"}, {b4, "samples_per_prompt", "16"},
		{b4, "global_batch", "256"}, {b4, "lr", "1e-6"}, {b4, "max_response_train", "8k"}, {b4, "max_response_eval", "16k"},
		{b8, "base_model", "Qwen3-8B"}, {b8, "prompts_per_rollout", "16"}, {b8, "samples_per_prompt", "8"},
		{b8, "updates", "120"}, {b8, "lr", "1e-6"}, {b8, "max_response_train", "4k"},
	} {
		if got := c.card.Setting(c.key); got != c.want {
			t.Errorf("%s %s = %q, want %q", c.card.ID, c.key, got, c.want)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	good := "card,benchmark,budget_tokens,avg_at_16,truncation_rate,note\nc,AIME,4096,0.5,0.1,\n"
	for _, tc := range []struct {
		name, file, body, want string
	}{
		{"bad name", "c.csv", good, "name is not"},
		{"unknown table", "c_plots.csv", good, "name is not"},
		{"bad header", "c_budgets.csv", strings.Replace(good, "avg_at_16", "avg16", 1), "header"},
		{"other card", "c_budgets.csv", strings.Replace(good, "\nc,", "\nd,", 1), `c_budgets.csv:2: column "card"`},
		{"percent not fraction", "c_budgets.csv", strings.Replace(good, "0.5", "28.96", 1), `c_budgets.csv:2: column "avg_at_16"`},
		{"bad integer", "c_budgets.csv", strings.Replace(good, "4096", "4k", 1), `c_budgets.csv:2: column "budget_tokens"`},
		{"short row", "c_budgets.csv", good + "c,AIME\n", "c_budgets.csv"},
		{"tp above labels", "c_scorers.csv", "card,set,variant,scorer,labels,tp,fp,note\nc,s,v,math,3,4,0,\n", `column "tp"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, tc.file), []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	var ce *CellError
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "c_budgets.csv"), []byte(strings.Replace(good, "0.1", "x", 1)), 0o644)
	if _, err := Load(dir); !errors.As(err, &ce) || ce.Line != 2 || ce.Column != "truncation_rate" {
		t.Errorf("err = %v, want a CellError at line 2, column truncation_rate", err)
	}
}

func TestMarkdown(t *testing.T) {
	cards, err := Load(cardsDir)
	if err != nil {
		t.Fatal(err)
	}
	b8, _ := Find(cards, "math-grpo-qwen3-8b")
	for _, c := range []struct{ name, md, want string }{
		{"training", TrainingMarkdown(cards), "| updates | 120 | - |"},
		{"benchmarks", BenchmarksMarkdown(cards), "| retool-grpo-qwen3-4b | Qwen3-4B-Instruct-2507 + GRPO with code_interpreter | MATH-500 | accuracy | 16384 | 95.60 |"},
		{"budgets", BudgetsMarkdown(b8), "| math-grpo-qwen3-8b | AIME | 4096 | 28.96 | 48.5 |"},
		{"scorers", ScorersMarkdown(b8), "| math-grpo-qwen3-8b | sample300 | boxed+answer_line | dapo | 300 | 202 | 0 |"},
	} {
		if !strings.Contains(c.md, c.want) {
			t.Errorf("%s markdown lacks %q:\n%s", c.name, c.want, c.md)
		}
	}
}
