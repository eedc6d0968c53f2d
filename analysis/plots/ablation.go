package plots

import (
	"fmt"
	"image/color"

	"github.com/mathrl/mathrl/analysis/ablation"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// AblationCurves draws each arm's evaluation avg@k against the optimizer
// step: the mean over its seeds as a line, the lowest and highest seed as a
// shaded band.
func AblationCurves(title string, curves []ablation.Curve) (*plot.Plot, error) {
	if len(curves) == 0 {
		return nil, fmt.Errorf("plots: ablation: no curves")
	}
	p := newPlot(title, "optimizer step", fmt.Sprintf("evaluation avg@%d", curves[0].K))
	for i, c := range curves {
		band := make(plotter.XYs, 0, 2*len(c.Steps))
		line := make(plotter.XYs, len(c.Steps))
		for j, s := range c.Steps {
			band = append(band, plotter.XY{X: float64(s), Y: c.Hi[j]})
			line[j] = plotter.XY{X: float64(s), Y: c.Mean[j]}
		}
		for j := len(c.Steps) - 1; j >= 0; j-- {
			band = append(band, plotter.XY{X: float64(c.Steps[j]), Y: c.Lo[j]})
		}
		poly, err := plotter.NewPolygon(band)
		if err != nil {
			return nil, fmt.Errorf("plots: %s: %w", c.Arm, err)
		}
		r, g, b, _ := Color(i).RGBA()
		poly.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 40}
		poly.LineStyle.Width = 0
		l, pts, err := plotter.NewLinePoints(line)
		if err != nil {
			return nil, fmt.Errorf("plots: %s: %w", c.Arm, err)
		}
		l.Color, pts.Color = Color(i), Color(i)
		l.Width = vg.Points(2)
		pts.Shape, pts.Radius = draw.CircleGlyph{}, vg.Points(2)
		p.Add(poly, l, pts)
		seeds := "seeds"
		if c.Seeds == 1 {
			seeds = "seed"
		}
		p.Legend.Add(fmt.Sprintf("%s (%d %s)", c.Arm, c.Seeds, seeds), l)
	}
	p.X.Tick.Marker = niceTicks{Integer: true}
	p.Y.Min = 0
	p.Y.Max = p.Y.Max*1.25 + 0.01
	p.Legend.Top, p.Legend.Left = true, true
	return p, nil
}
