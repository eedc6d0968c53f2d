package plots

import (
	"bytes"
	"flag"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/mathrl/mathrl/analysis/ablation"
	"github.com/mathrl/mathrl/analysis/metrics"
	"github.com/mathrl/mathrl/analysis/modelcard"
	"github.com/mathrl/mathrl/analysis/scorer/validation"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

var update = flag.Bool("update", false, "rewrite the golden PNGs in testdata/golden")

// checkGolden renders grid as PNG and compares it pixel by pixel with
// testdata/golden/name.png; at most 0.2% of the pixels may differ (room for
// rasteriser rounding on other CPUs, not for a changed text, bar or line).
// On a mismatch the new image is written beside the golden one as name.got.png.
func checkGolden(t *testing.T, name string, grid [][]*plot.Plot, w, h vg.Length) {
	t.Helper()
	got, err := GridPNG(grid, w, h)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "golden", name+".png")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update once to create it, then look at it)", err)
	}
	a, b := decode(t, got), decode(t, want)
	if a.Bounds() != b.Bounds() {
		t.Fatalf("%s: size %v, golden %v", name, a.Bounds(), b.Bounds())
	}
	diff, total := 0, 0
	for y := a.Bounds().Min.Y; y < a.Bounds().Max.Y; y++ {
		for x := a.Bounds().Min.X; x < a.Bounds().Max.X; x++ {
			total++
			r1, g1, b1, _ := a.At(x, y).RGBA()
			r2, g2, b2, _ := b.At(x, y).RGBA()
			if absDiff(r1, r2) > 0x1000 || absDiff(g1, g2) > 0x1000 || absDiff(b1, b2) > 0x1000 {
				diff++
			}
		}
	}
	if float64(diff) > 0.002*float64(total) {
		os.WriteFile(filepath.Join("testdata", "golden", name+".got.png"), got, 0o644)
		t.Errorf("%s: %d of %d pixels differ from the golden image (new one in testdata/golden/%s.got.png)", name, diff, total, name)
	}
}

func decode(t *testing.T, b []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

// figureKinds builds every kind of figure the package draws from small fixed
// inputs written here (and the committed testdata/validation.csv), each as a
// grid of plots with its size.
var figureKinds = []struct {
	name  string
	build func(t *testing.T) [][]*plot.Plot
	w, h  vg.Length
}{
	{"card_benchmarks", func(t *testing.T) [][]*plot.Plot { return one(t)(CardBenchmarks(goldenCards())) }, Width, Height},
	{"budgets_accuracy", func(t *testing.T) [][]*plot.Plot {
		return one(t)(BudgetAccuracy(goldenBudgetCard(), goldenBudgetSeries()))
	}, Width, Height},
	{"budgets_truncation", func(t *testing.T) [][]*plot.Plot {
		return one(t)(BudgetTruncation(goldenBudgetCard(), goldenBudgetSeries()))
	}, Width, Height},
	{"passk", func(t *testing.T) [][]*plot.Plot { return one(t)(PassAtK(goldenPassAtK())) }, Width, Height},
	{"scorers", func(t *testing.T) [][]*plot.Plot {
		card := []modelcard.ScorerRow{
			{Card: "card-a", Set: "sample300", Variant: "boxed+answer_line", Scorer: "math", Labels: 300, TP: 300},
			{Card: "card-a", Set: "sample300", Variant: "boxed+answer_line", Scorer: "dapo", Labels: 300, TP: 202},
			{Card: "card-a", Set: "sample300", Variant: "boxed+answer_line", Scorer: "deepscaler", Labels: 300}}
		return one(t)(ScorerCard(testCounts(t), "sample300", "boxed+answer_line", card))
	}, Width, Height},
	{"scorers_templates", func(t *testing.T) [][]*plot.Plot {
		templates, _ := splitTemplates(testCounts(t))
		return one(t)(ScorerVariants(templates, "sample300"))
	}, Width, Height},
	{"scorers_restated", func(t *testing.T) [][]*plot.Plot {
		_, restated := splitTemplates(testCounts(t))
		return one(t)(ScorerVariants(restated, "math500"))
	}, Width, Height},
	{"training", func(t *testing.T) [][]*plot.Plot {
		grid, err := TrainingCurves("golden", goldenSteps(), []metrics.EvalPoint{
			{Step: 0, K: 4, AvgAtK: 0.2, PassAtK: 0.35}, {Step: 15, K: 4, AvgAtK: 0.4, PassAtK: 0.6}, {Step: 30, K: 4, AvgAtK: 0.55, PassAtK: 0.7}})
		if err != nil {
			t.Fatal(err)
		}
		return grid
	}, TrainingWidth, TrainingHeight},
	{"ablation", func(t *testing.T) [][]*plot.Plot {
		steps := []int{0, 10, 20, 30}
		return one(t)(AblationCurves("", []ablation.Curve{
			{Arm: "grpo", Steps: steps, Mean: []float64{0.2, 0.3, 0.4, 0.5}, Lo: []float64{0.15, 0.25, 0.3, 0.4}, Hi: []float64{0.25, 0.35, 0.5, 0.6}, Seeds: 3, K: 4},
			{Arm: "gspo", Steps: steps, Mean: []float64{0.2, 0.3, 0.4, 0.5}, Lo: []float64{0.2, 0.3, 0.35, 0.45}, Hi: []float64{0.2, 0.3, 0.45, 0.55}, Seeds: 2, K: 4},
			{Arm: "drgrpo", Steps: steps, Mean: []float64{0.2, 0.45, 0.6, 0.7}, Lo: []float64{0.2, 0.45, 0.6, 0.7}, Hi: []float64{0.2, 0.45, 0.6, 0.7}, Seeds: 1, K: 4}}))
	}, Width, Height},
}

// TestGoldenFigures compares every kind of figure with its golden image
// (go test -update rewrites them; look at them before committing).
func TestGoldenFigures(t *testing.T) {
	for _, k := range figureKinds {
		t.Run(k.name, func(t *testing.T) { checkGolden(t, k.name, k.build(t), k.w, k.h) })
	}
}

// one returns a constructor's plot as a one-plot grid, failing t on its error.
func one(t *testing.T) func(*plot.Plot, error) [][]*plot.Plot {
	return func(p *plot.Plot, err error) [][]*plot.Plot {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return [][]*plot.Plot{{p}}
	}
}

func goldenCards() []modelcard.Card {
	return []modelcard.Card{
		{ID: "card-a", Benchmarks: []modelcard.Benchmark{
			{Card: "card-a", Model: "Model A + GRPO", Benchmark: "AIME", Metric: "avg@16", BudgetTokens: 16384, Value: 0.343}}},
		{ID: "card-b", Benchmarks: []modelcard.Benchmark{
			{Card: "card-b", Model: "Model B", Benchmark: "AIME 2024", Metric: "accuracy", BudgetTokens: 8192, Value: 0.4},
			{Card: "card-b", Model: "Model B + GRPO", Benchmark: "AIME 2024", Metric: "accuracy", BudgetTokens: 8192, Value: 0.581},
			{Card: "card-b", Model: "Model B + GRPO", Benchmark: "MATH-500", Metric: "accuracy", BudgetTokens: 8192, Value: 0.956}}},
	}
}

func goldenBudgetCard() []modelcard.BudgetRow {
	return []modelcard.BudgetRow{
		{Card: "card-a", Benchmark: "AIME", BudgetTokens: 4096, AvgAt16: 0.29, TruncationRate: 0.485},
		{Card: "card-a", Benchmark: "AIME", BudgetTokens: 8192, AvgAt16: 0.34, TruncationRate: 0.21},
		{Card: "card-a", Benchmark: "AIME", BudgetTokens: 16384, AvgAt16: 0.343, TruncationRate: 0.006}}
}

// goldenBudgetSeries is a measured series whose top point and interval reach
// above the card's, at the top left and right where a legend once stood.
func goldenBudgetSeries() []BudgetSeries {
	row := func(budget int, acc, trunc float64) metrics.Summary {
		return metrics.Summary{Model: "model-x", Budget: budget, K: 16, AvgAtK: acc, TruncationRate: trunc,
			AvgAtKCI:         metrics.Interval{Lo: acc - 0.08, Hi: acc + 0.1},
			TruncationRateCI: metrics.Interval{Lo: max(0, trunc-0.1), Hi: trunc + 0.1}}
	}
	return []BudgetSeries{{Label: "mathrl: model-x", Rows: []metrics.Summary{
		row(4096, 0.45, 0.6), row(8192, 0.3, 0.2), row(16384, 0.5, 0.5)}}}
}

// goldenPassAtK is two runs of four problems with eight samples each.
func goldenPassAtK() []PassAtKSeries {
	run := func(model string, correct ...int) PassAtKSeries {
		s := metrics.Summary{Model: model, K: 8}
		for i, c := range correct {
			s.Problems = append(s.Problems, metrics.ProblemStats{ProblemID: fmt.Sprint(i), Samples: 8, Correct: c})
		}
		return PassAtKSeries{Label: model, Summary: s}
	}
	return []PassAtKSeries{run("model-x", 8, 4, 1, 0), run("model-y", 8, 8, 2, 1)}
}

func goldenSteps() []metrics.StepMetrics {
	var steps []metrics.StepMetrics
	for i := 1; i <= 30; i++ {
		f := float64(i) / 30
		steps = append(steps, metrics.StepMetrics{Version: 1, Step: i, Samples: 64, RewardMean: -0.5 + f, RewardStd: 0.8,
			Accuracy: 0.25 + 0.5*f, ResponseLenMean: 800 - 200*f, ResponseLenMax: 1024, TruncationRate: 0.1 * (1 - f),
			ToolCallsPerSample: 0.5 + f, ToolErrorRate: 0.05, Entropy: 0.5 - 0.1*f, ClipFraction: 0.02, LR: 1e-6,
			Extra: map[string]float64{"tool_no_output_rate": 0.2 * (1 - f),
				"train_rollout_logprob_abs_diff": 0.01, "train_rollout_logprob_abs_diff_max": 0.05}})
	}
	return steps
}

func testCounts(t *testing.T) []validation.Count {
	t.Helper()
	counts, err := ReadValidationCSVFile(filepath.Join("testdata", "validation.csv"))
	if err != nil {
		t.Fatal(err)
	}
	return counts
}

// TestLegendsCoverNothing checks, for every kind of figure, that each legend
// lies where nothing else is drawn: the box around the pixels a legend
// changes is blank (white) when the figure is drawn without its legends. This
// is stricter than "covers no data": a legend may not cover a grid line,
// tick or label either.
func TestLegendsCoverNothing(t *testing.T) {
	for _, k := range figureKinds {
		t.Run(k.name, func(t *testing.T) {
			grid := k.build(t)
			full := render(grid, k.w, k.h)
			var boxes []image.Rectangle
			var legends []*plot.Legend
			for _, row := range grid {
				for _, p := range row {
					l := p.Legend
					p.Legend = plot.NewLegend()
					boxes = append(boxes, changed(full, render(grid, k.w, k.h)))
					p.Legend = l
					legends = append(legends, &p.Legend)
				}
			}
			saved := make([]plot.Legend, len(legends))
			for i, l := range legends {
				saved[i], *l = *l, plot.NewLegend()
			}
			bare := render(grid, k.w, k.h)
			for i, l := range legends {
				*l = saved[i]
			}
			for i, box := range boxes {
				if box.Empty() {
					t.Errorf("panel %d: no legend drawn", i)
					continue
				}
				if n := inked(bare, box); n > 0 {
					t.Errorf("panel %d: the legend at %v covers %d drawn pixels", i, box, n)
				}
			}
		})
	}
}

// render draws grid as an RGBA image at the figures' resolution.
func render(grid [][]*plot.Plot, w, h vg.Length) *image.RGBA {
	c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(DPI))
	drawGrid(draw.New(c), grid)
	return c.Image().(*image.RGBA)
}

// changed returns the smallest rectangle holding every pixel that differs
// between a and b (empty when none does).
func changed(a, b *image.RGBA) image.Rectangle {
	var r image.Rectangle
	for y := a.Rect.Min.Y; y < a.Rect.Max.Y; y++ {
		i := a.PixOffset(a.Rect.Min.X, y)
		if bytes.Equal(a.Pix[i:i+4*a.Rect.Dx()], b.Pix[i:i+4*a.Rect.Dx()]) {
			continue
		}
		for x := a.Rect.Min.X; x < a.Rect.Max.X; x++ {
			j := a.PixOffset(x, y)
			if !bytes.Equal(a.Pix[j:j+4], b.Pix[j:j+4]) {
				r = r.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	return r
}

// inked counts the pixels of img inside r that are not white.
func inked(img *image.RGBA, r image.Rectangle) int {
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if c := img.RGBAAt(x, y); c.R < 0xf0 || c.G < 0xf0 || c.B < 0xf0 {
				n++
			}
		}
	}
	return n
}
