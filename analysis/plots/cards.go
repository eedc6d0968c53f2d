package plots

import (
	"fmt"

	"github.com/mathrl/mathrl/analysis/modelcard"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// CardBenchmarks draws every benchmark score of the cards as bars in percent,
// one colour per card and its model in the legend, the value written on each
// bar. The cards give no base-model scores, so none are drawn; a card with
// several models (e.g. base and trained) gets one colour per model.
func CardBenchmarks(cards []modelcard.Card) (*plot.Plot, error) {
	p := newPlot("Published benchmark scores of the model cards",
		"benchmark, metric, response budget (tokens)", "score (%)")
	var names []string
	x := 0
	for _, c := range cards {
		for mi, model := range models(c.Benchmarks) {
			var vals plotter.Values
			var labels []string
			start := x
			for _, b := range c.Benchmarks {
				if b.Model != model {
					continue
				}
				vals = append(vals, 100*b.Value)
				labels = append(labels, fmt.Sprintf("%.1f", 100*b.Value))
				names = append(names, fmt.Sprintf("%s\n%s, %s", b.Benchmark, b.Metric, budgetLabel(b.BudgetTokens)))
				x++
			}
			bars, err := plotter.NewBarChart(vals, vg.Points(34))
			if err != nil {
				return nil, fmt.Errorf("plots: card %s: %w", c.ID, err)
			}
			bars.XMin = float64(start)
			bars.Color = Color(cardIndex(cards, c.ID)*2 + mi)
			bars.LineStyle.Width = 0
			p.Add(bars)
			p.Legend.Add(fmt.Sprintf("%s (card %s)", model, c.ID), bars)
			if err := addValueLabels(p, float64(start), vals, labels); err != nil {
				return nil, err
			}
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("plots: the cards give no benchmark scores")
	}
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.7, float64(len(names))-0.3
	p.X.Tick.Label.Font.Size = vg.Points(10)
	p.Y.Min, p.Y.Max = 0, 100
	legendAbove(p)
	return p, nil
}

// addValueLabels writes each value's label just above its bar.
func addValueLabels(p *plot.Plot, xmin float64, vals plotter.Values, labels []string) error {
	xys := make(plotter.XYs, len(vals))
	for i, v := range vals {
		xys[i].X, xys[i].Y = xmin+float64(i), v
	}
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
	if err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	for i := range l.TextStyle {
		l.TextStyle[i].Font = font.From(sans, 11)
		l.TextStyle[i].XAlign = -0.5
		l.TextStyle[i].YAlign = 0
	}
	l.Offset = vg.Point{Y: vg.Points(3)}
	p.Add(l)
	return nil
}

func models(bs []modelcard.Benchmark) []string {
	var out []string
	for _, b := range bs {
		if !contains(out, b.Model) {
			out = append(out, b.Model)
		}
	}
	return out
}

func cardIndex(cards []modelcard.Card, id string) int {
	for i, c := range cards {
		if c.ID == id {
			return i
		}
	}
	return 0
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
