package plots

import (
	"fmt"
	"image/color"
	"math"

	"github.com/mathrl/mathrl/analysis/metrics"
	"github.com/mathrl/mathrl/analysis/modelcard"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// BudgetSeries is one line of a budget figure: metrics at several budgets.
type BudgetSeries struct {
	Label string            // legend entry
	Rows  []metrics.Summary // one per budget, e.g. from metrics.BudgetTable
}

// Simulated reports whether the series was computed from simulated samples.
func (s BudgetSeries) Simulated() bool {
	return len(s.Rows) > 0 && s.Rows[0].Model == metrics.SimulatedModel
}

// BudgetAccuracy draws avg@k (%) against the response budget: the card's
// budget table as a dashed line, each measured series as a solid line with
// its 95% bootstrap interval.
func BudgetAccuracy(card []modelcard.BudgetRow, measured []BudgetSeries) (*plot.Plot, error) {
	return budgetFigure("avg@k", card, measured,
		func(r modelcard.BudgetRow) float64 { return r.AvgAt16 },
		func(s metrics.Summary) (float64, metrics.Interval) { return s.AvgAtK, s.AvgAtKCI })
}

// BudgetTruncation draws the fraction of responses cut at the budget (%)
// against the budget, as BudgetAccuracy does.
func BudgetTruncation(card []modelcard.BudgetRow, measured []BudgetSeries) (*plot.Plot, error) {
	return budgetFigure("truncated", card, measured,
		func(r modelcard.BudgetRow) float64 { return r.TruncationRate },
		func(s metrics.Summary) (float64, metrics.Interval) { return s.TruncationRate, s.TruncationRateCI })
}

func budgetFigure(what string, card []modelcard.BudgetRow, measured []BudgetSeries,
	cardValue func(modelcard.BudgetRow) float64, value func(metrics.Summary) (float64, metrics.Interval)) (*plot.Plot, error) {
	if len(card) == 0 && len(measured) == 0 {
		return nil, fmt.Errorf("plots: budget figure: no data")
	}
	bench, k, simulated := "", 0, false
	if len(card) > 0 {
		bench, k = card[0].Benchmark, 16
	}
	for _, s := range measured {
		if len(s.Rows) > 0 {
			k = s.Rows[0].K
		}
		simulated = simulated || s.Simulated()
	}
	metric := fmt.Sprintf("avg@%d", k)
	title := fmt.Sprintf("%s %s vs response budget", bench, metric)
	ylabel := metric + " (%)"
	if what == "truncated" {
		title = fmt.Sprintf("%s responses cut at the budget", bench)
		ylabel = "truncated responses (%)"
	}
	if simulated {
		title += " (measured: SIMULATED samples)"
	}
	p := newPlot(title, "response budget (tokens, log scale)", ylabel)
	p.X.Scale = plot.LogScale{}
	var budgets []int

	if len(card) > 0 {
		xys := make(plotter.XYs, len(card))
		for i, r := range card {
			xys[i].X, xys[i].Y = float64(r.BudgetTokens), 100*cardValue(r)
			budgets = appendBudget(budgets, r.BudgetTokens)
		}
		line, points, err := seriesLine(xys, series{Color: color.Black, Width: 1.5, Shape: draw.BoxGlyph{}, Radius: 4})
		if err != nil {
			return nil, fmt.Errorf("plots: %w", err)
		}
		line.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		p.Add(line, points)
		p.Legend.Add(fmt.Sprintf("card %s (published)", card[0].Card), line, points)
	}
	for i, s := range measured {
		xys := make(plotter.XYs, len(s.Rows))
		errs := make(plotter.YErrors, len(s.Rows))
		for j, r := range s.Rows {
			v, ci := value(r)
			xys[j].X, xys[j].Y = float64(r.Budget), 100*v
			if !math.IsNaN(ci.Lo) && ci.Hi >= ci.Lo {
				errs[j].Low, errs[j].High = 100*(v-ci.Lo), 100*(ci.Hi-v)
			}
			budgets = appendBudget(budgets, r.Budget)
		}
		c := Color(i)
		line, points, err := seriesLine(xys, series{Color: c, Width: 2, Shape: draw.CircleGlyph{}, Radius: 4})
		if err != nil {
			return nil, fmt.Errorf("plots: %s: %w", s.Label, err)
		}
		bars, err := plotter.NewYErrorBars(struct {
			plotter.XYer
			plotter.YErrorer
		}{xys, errs})
		if err != nil {
			return nil, fmt.Errorf("plots: %s: %w", s.Label, err)
		}
		bars.Color = c
		bars.Width = vg.Points(1.2)
		bars.CapWidth = vg.Points(8)
		p.Add(line, points, bars)
		p.Legend.Add(s.Label+", bars: 95% bootstrap interval", line, points)
	}
	p.X.Tick.Marker = budgetTicks(budgets)
	p.Y.Min = 0
	if p.Y.Max < 10 {
		p.Y.Max = 10
	}
	pad := 0.15
	p.X.Min, p.X.Max = p.X.Min*math.Pow(2, -pad*2), p.X.Max*math.Pow(2, pad*2)
	legendAbove(p)
	return p, nil
}

func appendBudget(bs []int, b int) []int {
	for _, x := range bs {
		if x == b {
			return bs
		}
	}
	return append(bs, b)
}

// budgetTicks labels each budget as "4k" (multiples of 1024) or its token count.
func budgetTicks(budgets []int) plot.ConstantTicks {
	var ticks plot.ConstantTicks
	for _, b := range budgets {
		label := budgetLabel(b)
		if b%1024 == 0 {
			label += fmt.Sprintf(" (%d)", b)
		}
		ticks = append(ticks, plot.Tick{Value: float64(b), Label: label})
	}
	return ticks
}

// budgetLabel writes a budget in tokens as "16k" when it is a multiple of
// 1024, else as its token count.
func budgetLabel(tokens int) string {
	if tokens%1024 == 0 {
		return fmt.Sprintf("%dk", tokens/1024)
	}
	return fmt.Sprint(tokens)
}
