package metrics

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteBudgetTable writes rows (one Summary per budget, as BudgetTable returns)
// as an aligned text table headed by the run's model, scorer and size.
func WriteBudgetTable(w io.Writer, rows []Summary) error {
	if len(rows) == 0 {
		return fmt.Errorf("metrics: no rows")
	}
	r0 := rows[0]
	if _, err := fmt.Fprintf(w, "model %s, scorer %s, %d problems, k=%d%s\n", r0.Model, r0.Scorer, len(r0.Problems), r0.K, simulatedNote(r0)); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "budget\tavg@%d [95%% CI]\tpass@%d [95%% CI]\tmean length\ttruncated [95%% CI]\taccuracy if finished\terrors\n", r0.K, r0.K)
	for _, r := range rows {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%.0f\t%s\t%s\t%d\n", r.Budget, pctCI(r.AvgAtK, r.AvgAtKCI), pctCI(r.PassAtK, r.PassAtKCI),
			r.MeanLength, pctCI(r.TruncationRate, r.TruncationRateCI), finishedPct(r), r.Errors)
	}
	return tw.Flush()
}

// WriteBudgetTables writes each of tables (as BudgetTables returns) with
// WriteBudgetTable, a blank line between two.
func WriteBudgetTables(w io.Writer, tables [][]Summary) error {
	for i, rows := range tables {
		if i > 0 {
			if _, err := fmt.Fprintln(w); err != nil {
				return err
			}
		}
		if err := WriteBudgetTable(w, rows); err != nil {
			return err
		}
	}
	return nil
}

// BudgetMarkdown renders rows as a Markdown table, for notebooks and reports.
func BudgetMarkdown(rows []Summary) string {
	if len(rows) == 0 {
		return ""
	}
	var b strings.Builder
	k := rows[0].K
	fmt.Fprintf(&b, "| budget (tokens) | avg@%d (%%) [95%% CI] | pass@%d (%%) [95%% CI] | mean length (tokens) | truncated (%%) [95%% CI] | accuracy if finished (%%) |\n", k, k)
	b.WriteString("|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %d | %s | %s | %.0f | %s | %s |\n", r.Budget, pctCI(r.AvgAtK, r.AvgAtKCI),
			pctCI(r.PassAtK, r.PassAtKCI), r.MeanLength, pctCI(r.TruncationRate, r.TruncationRateCI), finishedPct(r))
	}
	return b.String()
}

// pctCI formats a fraction and its interval in percent; the interval is
// left out when it was not computed.
func pctCI(v float64, ci Interval) string {
	if ci == (Interval{}) {
		return fmt.Sprintf("%.2f", 100*v)
	}
	return fmt.Sprintf("%.2f [%.1f, %.1f]", 100*v, 100*ci.Lo, 100*ci.Hi)
}

// finishedPct formats the accuracy among finished samples, or "-" when none finished.
func finishedPct(s Summary) string {
	if s.Finished == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f (%d samples)", 100*s.FinishedAccuracy, s.Finished)
}

func simulatedNote(s Summary) string {
	if s.Model == SimulatedModel {
		return " (SIMULATED samples, not a model)"
	}
	return ""
}
