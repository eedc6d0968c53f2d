package modelcard

import (
	"fmt"
	"strings"
)

// TrainingMarkdown renders the cards' training settings side by side as a
// Markdown table, one column per card; "-" where a card does not say.
func TrainingMarkdown(cards []Card) string {
	var keys []string
	for _, c := range cards {
		for _, s := range c.Training {
			if !contains(keys, s.Key) {
				keys = append(keys, s.Key)
			}
		}
	}
	var b strings.Builder
	b.WriteString("| setting |")
	for _, c := range cards {
		fmt.Fprintf(&b, " %s |", c.ID)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(cards)) + "\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "| %s |", k)
		for _, c := range cards {
			v := c.Setting(k)
			if v == "" {
				v = "-"
			}
			fmt.Fprintf(&b, " %s |", escape(v))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// BenchmarksMarkdown renders every card's benchmark scores (in percent) as a Markdown table.
func BenchmarksMarkdown(cards []Card) string {
	var b strings.Builder
	b.WriteString("| card | model | benchmark | metric | budget (tokens) | score (%) |\n|---|---|---|---|---:|---:|\n")
	for _, c := range cards {
		for _, x := range c.Benchmarks {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %.2f |\n", c.ID, escape(x.Model), escape(x.Benchmark), x.Metric, x.BudgetTokens, 100*x.Value)
		}
	}
	return b.String()
}

// BudgetsMarkdown renders a card's budget table (in percent) as Markdown.
func BudgetsMarkdown(c Card) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| card | benchmark | budget (tokens) | avg@16 (%%) | truncated (%%) |\n|---|---|---:|---:|---:|\n")
	for _, r := range c.Budgets {
		fmt.Fprintf(&b, "| %s | %s | %d | %.2f | %.1f |\n", c.ID, escape(r.Benchmark), r.BudgetTokens, 100*r.AvgAt16, 100*r.TruncationRate)
	}
	return b.String()
}

// ScorersMarkdown renders a card's scorer table as Markdown.
func ScorersMarkdown(c Card) string {
	var b strings.Builder
	b.WriteString("| card | set | responses | scorer | labels | accepted correct (TP) | accepted wrong (FP) |\n|---|---|---|---|---:|---:|---:|\n")
	for _, r := range c.Scorers {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %d | %d |\n", c.ID, r.Set, escape(r.Variant), r.Scorer, r.Labels, r.TP, r.FP)
	}
	return b.String()
}

// escape keeps a cell's text from breaking a Markdown table.
func escape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "<", "&lt;", ">", "&gt;").Replace(s)
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
