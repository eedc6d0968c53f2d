package plots

import (
	"fmt"

	"github.com/mathrl/mathrl/analysis/metrics"
)

// NewBudgetSeries makes the series of one run's budget table (one Summary
// per budget, as metrics.BudgetTable returns), labelled by the run's model
// and saying SIMULATED for simulated samples.
func NewBudgetSeries(rows []metrics.Summary) BudgetSeries {
	if len(rows) == 0 {
		return BudgetSeries{}
	}
	return BudgetSeries{Label: seriesLabel(rows[0]), Rows: rows}
}

// BudgetPassAtK makes one pass@k series per row of a budget table, labelled
// by its budget.
func BudgetPassAtK(rows []metrics.Summary) []PassAtKSeries {
	series := make([]PassAtKSeries, len(rows))
	for i, r := range rows {
		series[i] = PassAtKSeries{Label: fmt.Sprintf("%s, %d tokens", seriesLabel(r), r.Budget), Summary: r}
	}
	return series
}
