package plots

import (
	"fmt"

	"github.com/mathrl/mathrl/analysis/metrics"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// PassAtKSeries is one pass@k curve and its legend entry.
type PassAtKSeries struct {
	Label   string
	Summary metrics.Summary // its PassAtKCurve is drawn
}

// PassAtK draws pass@k (%) against k on a log2 axis, one line per series.
func PassAtK(series []PassAtKSeries) (*plot.Plot, error) {
	if len(series) == 0 {
		return nil, fmt.Errorf("plots: pass@k: no series")
	}
	title := "pass@k against k (unbiased estimate)"
	for _, s := range series {
		if s.Summary.Model == metrics.SimulatedModel {
			title += " on SIMULATED samples"
			break
		}
	}
	p := newPlot(title, "k (samples per problem, log scale)", "pass@k (%)")
	p.X.Scale = plot.LogScale{}
	var ticks plot.ConstantTicks
	kmax := 0
	for i, s := range series {
		ks, pass := s.Summary.PassAtKCurve()
		if len(ks) == 0 {
			return nil, fmt.Errorf("plots: pass@k: %s has no samples", s.Label)
		}
		xys := make(plotter.XYs, len(ks))
		for j := range ks {
			xys[j].X, xys[j].Y = float64(ks[j]), 100*pass[j]
		}
		line, points, err := markedLine(xys, i)
		if err != nil {
			return nil, fmt.Errorf("plots: %s: %w", s.Label, err)
		}
		p.Add(line, points)
		p.Legend.Add(fmt.Sprintf("%s (%d problems)", s.Label, len(s.Summary.Problems)), line, points)
		kmax = max(kmax, ks[len(ks)-1])
	}
	for k := 1; k <= kmax; k *= 2 {
		ticks = append(ticks, plot.Tick{Value: float64(k), Label: fmt.Sprint(k)})
	}
	p.X.Tick.Marker = ticks
	p.X.Min, p.X.Max = 0.9, float64(kmax)*1.1
	p.Y.Min, p.Y.Max = 0, 100
	legendAbove(p)
	return p, nil
}
