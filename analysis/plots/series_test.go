package plots

import (
	"testing"

	"github.com/mathrl/mathrl/analysis/metrics"
)

func TestSeriesLabels(t *testing.T) {
	rows := []metrics.Summary{{Model: "demo@step-30", Budget: 64}, {Model: "demo@step-30", Budget: 320}}
	if s := NewBudgetSeries(rows); s.Label != "mathrl: demo@step-30" || len(s.Rows) != 2 {
		t.Errorf("NewBudgetSeries: %+v", s)
	}
	if s := NewBudgetSeries([]metrics.Summary{{Model: metrics.SimulatedModel}}); !s.Simulated() || s.Label != "SIMULATED samples (not a model)" {
		t.Errorf("simulated: %+v", s)
	}
	pk := BudgetPassAtK(rows)
	if len(pk) != 2 || pk[0].Label != "mathrl: demo@step-30, 64 tokens" || pk[1].Summary.Budget != 320 {
		t.Errorf("BudgetPassAtK: %+v", pk)
	}
}
