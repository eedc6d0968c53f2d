package plots

import (
	"fmt"

	"github.com/mathrl/mathrl/analysis/metrics"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// trainPanel is one panel of the training figure: named series of one unit.
type trainPanel struct {
	title, ylabel string
	series        []trainSeries
}

type trainSeries struct {
	label string
	value func(metrics.StepMetrics) float64
	extra string // when set, the series is the Extra metric of that name, drawn only if some step has it
}

var trainPanels = []trainPanel{
	{"Reward", "reward (mean)", []trainSeries{{label: "mean", value: func(m metrics.StepMetrics) float64 { return m.RewardMean }}}},
	{"Accuracy", "accepted by the scorer (%)", []trainSeries{{label: "accuracy", value: func(m metrics.StepMetrics) float64 { return 100 * m.Accuracy }}}},
	{"Response length", "tokens per response", []trainSeries{
		{label: "mean", value: func(m metrics.StepMetrics) float64 { return m.ResponseLenMean }},
		{label: "max", value: func(m metrics.StepMetrics) float64 { return float64(m.ResponseLenMax) }}}},
	{"Truncation", "cut at the budget (%)", []trainSeries{{label: "truncated", value: func(m metrics.StepMetrics) float64 { return 100 * m.TruncationRate }}}},
	{"Tool use", "per response, or fraction", []trainSeries{
		{label: "tool calls per response", value: func(m metrics.StepMetrics) float64 { return m.ToolCallsPerSample }},
		{label: "failed calls (fraction)", value: func(m metrics.StepMetrics) float64 { return m.ToolErrorRate }},
		{label: "calls without output (fraction)", extra: "tool_no_output_rate"}}},
	{"Policy", "nats/token, or fraction ×10", []trainSeries{
		{label: "entropy (nats per token)", value: func(m metrics.StepMetrics) float64 { return m.Entropy }},
		{label: "clipped tokens, fraction ×10", value: func(m metrics.StepMetrics) float64 { return 10 * m.ClipFraction }},
		{label: "|log π_train − log π_rollout|, mean (nats)", extra: "train_rollout_logprob_abs_diff"},
		{label: "|log π_train − log π_rollout|, max (nats)", extra: "train_rollout_logprob_abs_diff_max"}}},
}

// TrainingCurves draws a run's metrics log as a 2×3 grid: reward, accuracy
// (with the evaluations, when there are any), response length, truncation,
// tool use, and policy entropy and clipping (with the rollout/trainer
// log-prob mismatch, when logged), each against the optimizer step.
// name goes into every panel's title.
func TrainingCurves(name string, steps []metrics.StepMetrics, evals []metrics.EvalPoint) ([][]*plot.Plot, error) {
	if len(steps) == 0 {
		return nil, fmt.Errorf("plots: training curves: no steps")
	}
	var flat []*plot.Plot
	for _, panel := range trainPanels {
		p := newPlot(fmt.Sprintf("%s: %s", name, panel.title), "optimizer step", panel.ylabel)
		p.Title.TextStyle.Font.Size = vg.Points(13)
		p.Legend.TextStyle.Font.Size = vg.Points(10)
		p.Y.Label.TextStyle.Font.Size = vg.Points(12)
		for i, s := range panel.series {
			value := s.value
			if s.extra != "" {
				if !anyStepHas(steps, s.extra) {
					continue
				}
				value = func(m metrics.StepMetrics) float64 { return m.Extra[s.extra] } // 0 on a step without it
			}
			xys := make(plotter.XYs, len(steps))
			for j, m := range steps {
				xys[j].X, xys[j].Y = float64(m.Step), value(m)
			}
			st := series{Color: Color(i), Width: 1.8, Shape: draw.CircleGlyph{}, Radius: 1.5}
			if len(steps) > 60 {
				st.Radius = 0 // a dense line needs no dots
			}
			line, points, err := seriesLine(xys, st)
			if err != nil {
				return nil, fmt.Errorf("plots: %s: %w", s.label, err)
			}
			p.Add(line, points)
			p.Legend.Add(s.label, line)
		}
		if panel.title == "Accuracy" && len(evals) > 0 {
			if err := addEvalLines(p, evals, len(panel.series)); err != nil {
				return nil, err
			}
		}
		p.X.Tick.Marker = niceTicks{Integer: true}
		if p.Y.Min > 0 {
			p.Y.Min = 0
		}
		if p.Y.Max == p.Y.Min {
			p.Y.Max = p.Y.Min + 1
		}
		flat = append(flat, p)
	}
	legendAbove(flat...)
	return [][]*plot.Plot{flat[:3], flat[3:]}, nil
}

// TrainingWidth and TrainingHeight size the training figure.
const (
	TrainingWidth  = 15 * vg.Inch
	TrainingHeight = 8 * vg.Inch
)

// anyStepHas reports whether some step carries the Extra metric name.
func anyStepHas(steps []metrics.StepMetrics, name string) bool {
	for _, m := range steps {
		if _, ok := m.Extra[name]; ok {
			return true
		}
	}
	return false
}

// addEvalLines draws evaluation avg@k and pass@k (in %) on p, in the colors
// after the first `used`.
func addEvalLines(p *plot.Plot, evals []metrics.EvalPoint, used int) error {
	k := evals[len(evals)-1].K
	for i, s := range []struct {
		label string
		value func(metrics.EvalPoint) float64
	}{
		{fmt.Sprintf("eval avg@%d", k), func(e metrics.EvalPoint) float64 { return e.AvgAtK }},
		{fmt.Sprintf("eval pass@%d", k), func(e metrics.EvalPoint) float64 { return e.PassAtK }},
	} {
		xys := make(plotter.XYs, len(evals))
		for j, e := range evals {
			xys[j].X, xys[j].Y = float64(e.Step), 100*s.value(e)
		}
		line, points, err := seriesLine(xys, series{Color: Color(used + i), Width: 2.4, Shape: draw.BoxGlyph{}, Radius: 2.5})
		if err != nil {
			return fmt.Errorf("plots: %s: %w", s.label, err)
		}
		p.Add(line, points)
		p.Legend.Add(s.label, line)
	}
	return nil
}
