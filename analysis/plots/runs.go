package plots

import (
	"fmt"

	"github.com/mathrl/mathrl/analysis/runs"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// RunCurves draws each run's evaluation avg@k (%) against the optimizer step,
// one line per run, named by the run folder. Every run must have evaluated at
// least once and at the same k. An empty title says "Evaluation avg@k by run".
func RunCurves(title string, rs []runs.Run) (*plot.Plot, error) {
	if len(rs) == 0 {
		return nil, fmt.Errorf("plots: runs: no runs")
	}
	k := rs[0].Final.K
	if title == "" {
		title = fmt.Sprintf("Evaluation avg@%d by run", k)
	}
	p := newPlot(title, "optimizer step", fmt.Sprintf("evaluation avg@%d (%%)", k))
	for i, r := range rs {
		if len(r.Evals) == 0 {
			return nil, fmt.Errorf("plots: run %s: no evaluation", r.Name)
		}
		line := make(plotter.XYs, len(r.Evals))
		for j, e := range r.Evals {
			if e.K != k {
				return nil, fmt.Errorf("plots: run %s: evaluation at step %d has k %d, run %s has %d", r.Name, e.Step, e.K, rs[0].Name, k)
			}
			line[j] = plotter.XY{X: float64(e.Step), Y: 100 * e.AvgAtK}
		}
		l, pts, err := markedLine(line, i)
		if err != nil {
			return nil, fmt.Errorf("plots: run %s: %w", r.Name, err)
		}
		p.Add(l, pts)
		p.Legend.Add(r.Name, l, pts)
	}
	p.X.Tick.Marker = niceTicks{Integer: true}
	p.Y.Min = 0
	legendAbove(p)
	return p, nil
}
