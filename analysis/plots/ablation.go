package plots

import (
	"fmt"
	"image/color"

	"github.com/mathrl/mathrl/analysis/ablation"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// AblationCurves draws each arm's evaluation avg@k (%) against the optimizer
// step: the mean over its seeds as a line, the lowest and highest seed as a
// shaded band. An empty title says "Evaluation avg@k by arm".
func AblationCurves(title string, curves []ablation.Curve) (*plot.Plot, error) {
	if len(curves) == 0 {
		return nil, fmt.Errorf("plots: ablation: no curves")
	}
	if title == "" {
		title = fmt.Sprintf("Evaluation avg@%d by arm", curves[0].K)
	}
	p := newPlot(title, "optimizer step", fmt.Sprintf("evaluation avg@%d (%%)", curves[0].K))
	for i, c := range curves {
		band := make(plotter.XYs, 0, 2*len(c.Steps))
		line := make(plotter.XYs, len(c.Steps))
		for j, s := range c.Steps {
			band = append(band, plotter.XY{X: float64(s), Y: 100 * c.Hi[j]})
			line[j] = plotter.XY{X: float64(s), Y: 100 * c.Mean[j]}
		}
		for j := len(c.Steps) - 1; j >= 0; j-- {
			band = append(band, plotter.XY{X: float64(c.Steps[j]), Y: 100 * c.Lo[j]})
		}
		poly, err := plotter.NewPolygon(band)
		if err != nil {
			return nil, fmt.Errorf("plots: %s: %w", c.Arm, err)
		}
		r, g, b, _ := Color(i).RGBA()
		poly.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 40}
		poly.LineStyle.Width = 0
		l, pts, err := markedLine(line, i)
		if err != nil {
			return nil, fmt.Errorf("plots: %s: %w", c.Arm, err)
		}
		p.Add(poly, l, pts)
		seeds := "seeds"
		if c.Seeds == 1 {
			seeds = "seed"
		}
		p.Legend.Add(fmt.Sprintf("%s: mean of %d %s, band from lowest to highest", c.Arm, c.Seeds, seeds), poly, l, pts)
	}
	p.X.Tick.Marker = niceTicks{Integer: true}
	p.Y.Min = 0
	legendAbove(p)
	return p, nil
}
