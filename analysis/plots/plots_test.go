package plots

import (
	"bytes"
	"flag"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/analysis/ablation"
	"github.com/mathrl/mathrl/analysis/metrics"
	"github.com/mathrl/mathrl/analysis/modelcard"
	"github.com/mathrl/mathrl/analysis/runs"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

var figDir = flag.String("figdir", "", "also write the test figures to this folder, to look at them")

const cardsDir = "../../results/model_cards"

func loadCards(t *testing.T) []modelcard.Card {
	t.Helper()
	cards, err := modelcard.Load(cardsDir)
	if err != nil {
		t.Fatal(err)
	}
	return cards
}

func simulatedBudgets(t *testing.T) []metrics.Summary {
	t.Helper()
	s, err := metrics.Simulate(metrics.DefaultSimConfig(), rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := metrics.BudgetTable(s, []int{4096, 8192, 16384}, 16, 500, rand.New(rand.NewPCG(2, 2)))
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// checkFigure saves the grid, then checks the PNG's size and that the SVG
// carries every wanted text (titles, axis labels, legend entries).
func checkFigure(t *testing.T, name string, grid [][]*plot.Plot, w, h float64, want ...string) string {
	t.Helper()
	dir := t.TempDir()
	if *figDir != "" {
		dir = *figDir
	}
	base := filepath.Join(dir, name)
	if err := SaveGrid(grid, toLength(w), toLength(h), base); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(base + ".png")
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != int(w*DPI) || b.Dy() != int(h*DPI) {
		t.Errorf("%s.png is %dx%d, want %dx%d", name, b.Dx(), b.Dy(), int(w*DPI), int(h*DPI))
	}
	svg, err := os.ReadFile(base + ".svg")
	if err != nil {
		t.Fatal(err)
	}
	text := svgText(string(svg))
	for _, s := range want {
		if !strings.Contains(text, s) {
			t.Errorf("%s.svg lacks %q", name, s)
		}
	}
	return text
}

func TestCardBenchmarks(t *testing.T) {
	p, err := CardBenchmarks(loadCards(t))
	if err != nil {
		t.Fatal(err)
	}
	checkFigure(t, "card_benchmarks", [][]*plot.Plot{{p}}, 8, 5,
		"Published benchmark scores", "score (%)", "58.1", "49.8", "95.6", "34.3",
		"Qwen3-4B-Instruct-2507", "Qwen3-8B", "AIME 2024", "MATH-500")
}

func TestBudgetFigures(t *testing.T) {
	card, err := modelcard.Find(loadCards(t), "math-grpo-qwen3-8b")
	if err != nil {
		t.Fatal(err)
	}
	series := []BudgetSeries{{Label: "simulated samples (not a model)", Rows: simulatedBudgets(t)}}
	acc, err := BudgetAccuracy(card.Budgets, series)
	if err != nil {
		t.Fatal(err)
	}
	checkFigure(t, "budget_accuracy", [][]*plot.Plot{{acc}}, 8, 5,
		"AIME avg@16 vs response budget", "SIMULATED", "avg@16 (%)", "response budget",
		"card math-grpo-qwen3-8b", "simulated samples", "4k (4096)", "16k (16384)")
	tr, err := BudgetTruncation(card.Budgets, series)
	if err != nil {
		t.Fatal(err)
	}
	checkFigure(t, "budget_truncation", [][]*plot.Plot{{tr}}, 8, 5,
		"cut at the budget", "SIMULATED", "truncated responses (%)", "card math-grpo-qwen3-8b")
}

func TestPassAtKFigure(t *testing.T) {
	rows := simulatedBudgets(t)
	p, err := PassAtK([]PassAtKSeries{{"4k budget", rows[0]}, {"16k budget", rows[2]}})
	if err != nil {
		t.Fatal(err)
	}
	checkFigure(t, "passk", [][]*plot.Plot{{p}}, 8, 5, "pass@k", "SIMULATED", "4k budget (30 problems)", "k (samples")
}

func TestTrainingCurves(t *testing.T) {
	var steps []metrics.StepMetrics
	for i := 1; i <= 40; i++ {
		f := float64(i) / 40
		steps = append(steps, metrics.StepMetrics{Version: 1, Step: i, Samples: 64, RewardMean: -0.6 + f, RewardStd: 0.8,
			Accuracy: 0.2 + 0.5*f, ResponseLenMean: 900 - 300*f, ResponseLenMax: 2048, TruncationRate: 0.2 * (1 - f),
			ToolCallsPerSample: 0.3 + f, ToolErrorRate: 0.1, Entropy: 0.6 - 0.2*f, ClipFraction: 0.01, LR: 1e-6})
	}
	grid, err := TrainingCurves("demo", steps, nil)
	if err != nil {
		t.Fatal(err)
	}
	svg := checkFigure(t, "training", grid, 15, 8, "demo: Reward", "demo: Accuracy", "demo: Response length",
		"demo: Truncation", "demo: Tool use", "tool calls per response", "optimizer step", "max")
	for _, absent := range []string{"eval avg@", "calls without output", "log π_train"} {
		if strings.Contains(svg, absent) {
			t.Errorf("figure without evaluations or extras draws %q", absent)
		}
	}

	// With evaluations, the no-output extra and the mismatch metrics, all are drawn.
	for i := range steps {
		steps[i].Extra = map[string]float64{"tool_no_output_rate": 0.3 * (1 - float64(i)/40),
			"train_rollout_logprob_abs_diff": 0.01, "train_rollout_logprob_abs_diff_max": 0.05}
	}
	evals := []metrics.EvalPoint{{Step: 0, K: 2, AvgAtK: 0.1, PassAtK: 0.2}, {Step: 20, K: 2, AvgAtK: 0.3, PassAtK: 0.4}, {Step: 40, K: 2, AvgAtK: 0.4, PassAtK: 0.5}}
	grid, err = TrainingCurves("demo", steps, evals)
	if err != nil {
		t.Fatal(err)
	}
	checkFigure(t, "training_with_evals", grid, 15, 8, "eval avg@2", "eval pass@2", "calls without output",
		"|log π_train − log π_rollout|, mean", "|log π_train − log π_rollout|, max")
}

// svgText returns the text drawn in an SVG written by gonum/plot (one <text> per string).
func svgText(svg string) string {
	var b strings.Builder
	for _, part := range strings.Split(svg, "<text")[1:] {
		if i := strings.Index(part, ">"); i >= 0 {
			if j := strings.Index(part[i:], "</text>"); j >= 0 {
				b.WriteString(part[i+1:i+j] + "\n")
			}
		}
	}
	return strings.NewReplacer("&#34;", `"`, "&#39;", "'", "&amp;", "&", "&lt;", "<", "&gt;", ">").Replace(b.String())
}

func toLength(inches float64) vg.Length { return vg.Length(inches) * vg.Inch }

func TestScorerFigures(t *testing.T) {
	f, err := os.Open("testdata/validation.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	counts, err := ReadValidationCSV(f, "validation.csv")
	if err != nil {
		t.Fatal(err)
	}
	card, err := modelcard.Find(loadCards(t), "math-grpo-qwen3-8b")
	if err != nil {
		t.Fatal(err)
	}
	p, err := ScorerCard(counts, "sample300", "boxed+answer_line", card.Scorers)
	if err != nil {
		t.Fatal(err)
	}
	checkFigure(t, "scorers_sample300", [][]*plot.Plot{{p}}, 8, 5, "What each scorer accepts: sample300", "boxed+answer_line",
		"math", "dapo", "deepscaler", "mathrl: correct accepted (TP)", "card math-grpo-qwen3-8b: TP", "202", "195", "97")
	templates, restated := splitTemplates(counts)
	v, err := ScorerVariants(templates, "sample300")
	if err != nil {
		t.Fatal(err)
	}
	text := checkFigure(t, "scorers_templates_sample300", [][]*plot.Plot{{v}}, 8, 5, "by template", "answer_line",
		"think+boxed+answer_line", "response template", "correct responses accepted (%)", "65", "verify")
	if strings.Contains(text, "dfrac") {
		t.Error("the templates figure draws a restated answer")
	}
	r, err := ScorerVariants(restated, "math500")
	if err != nil {
		t.Fatal(err)
	}
	text = checkFigure(t, "scorers_restated_math500", [][]*plot.Plot{{r}}, 8, 5, "by restated answer", "dfrac",
		"answer restated as", "inequality", "67")
	if strings.Contains(text, "think+boxed") {
		t.Error("the restatements figure draws a response template")
	}
}

func TestWriteScorerFigures(t *testing.T) {
	dir := t.TempDir()
	in := Inputs{Out: dir, Validation: "testdata/validation.csv", Set: "math500", Variant: "boxed+answer_line"}
	saved, err := WriteFigures(KindScorers, in)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, base := range saved {
		names = append(names, filepath.Base(base))
	}
	want := []string{"scorers_math500", "scorers_templates_math500", "scorers_restated_math500"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("wrote %v, want %v", names, want)
	}

	// Counts of the five templates only: no restatements figure.
	only := filepath.Join(dir, "templates.csv")
	if err := os.WriteFile(only, []byte("set,scorer,variant,labels,tp,fp,errors\ns,math,boxed,3,3,0,0\ns,math,answer_line,3,0,0,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in.Validation, in.Set, in.Variant = only, "s", "boxed"
	saved, err = WriteFigures(KindScorers, in)
	if err != nil || len(saved) != 2 || filepath.Base(saved[1]) != "scorers_templates_s" {
		t.Errorf("templates only: wrote %v, %v; want scorers_s and scorers_templates_s", saved, err)
	}
}

func TestReadValidationCSVErrors(t *testing.T) {
	head := "set,scorer,variant,labels,tp,fp,errors\n"
	for _, tc := range []struct{ name, body, want string }{
		{"header", "set,scorer,variant,labels,tp,fp\n", "header"},
		{"bad number", head + "s,math,boxed,300,x,0,0\n", `v.csv:2: column "tp"`},
		{"tp above labels", head + "s,math,boxed,3,4,0,0\n", "exceeds labels"},
		{"empty", head, "no rows"},
	} {
		if _, err := ReadValidationCSV(strings.NewReader(tc.body), "v.csv"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
}

func TestTrainingCurvesOneStep(t *testing.T) {
	grid, err := TrainingCurves("one", []metrics.StepMetrics{{Version: 1, Step: 1, Samples: 8, Accuracy: 0.5, LR: 1e-6}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkFigure(t, "training_one_step", grid, 15, 8, "one: Reward", "optimizer step")
}

func TestReadEvalsBeside(t *testing.T) {
	dir := t.TempDir()
	metricsPath := filepath.Join(dir, "train.jsonl")
	if got, err := readEvalsBeside(metricsPath); err != nil || got != nil {
		t.Fatalf("no eval.jsonl: %v, %v", got, err)
	}
	evalPath := filepath.Join(dir, "eval.jsonl")
	good := `{"step":0,"rollout":0,"k":2,"avg_at_k":0.117,"pass_at_k":0.1875,"truncation_rate":0.05}` + "\n" +
		`{"step":5,"rollout":5,"k":2,"avg_at_k":0.164,"pass_at_k":0.203}` + "\n"
	if err := os.WriteFile(evalPath, []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readEvalsBeside(metricsPath)
	want := []metrics.EvalPoint{{Step: 0, K: 2, AvgAtK: 0.117, PassAtK: 0.1875, Truncation: 0.05}, {Step: 5, Rollout: 5, K: 2, AvgAtK: 0.164, PassAtK: 0.203}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, %v; want %+v", got, err, want)
	}
	if err := os.WriteFile(evalPath, []byte(good+`{"step":10,"k":2,"avg_at_k":"high"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readEvalsBeside(metricsPath); err == nil || !strings.Contains(err.Error(), "eval.jsonl:3") {
		t.Errorf("ill-typed avg_at_k: %v, want an error naming eval.jsonl:3", err)
	}
}

func TestAblationCurves(t *testing.T) {
	curves := []ablation.Curve{
		{Arm: "grpo", Steps: []int{0, 5, 10}, Mean: []float64{0.2, 0.4, 0.5}, Lo: []float64{0.1, 0.3, 0.4}, Hi: []float64{0.3, 0.5, 0.6}, Seeds: 3, K: 2},
		{Arm: "gspo", Steps: []int{0, 5, 10}, Mean: []float64{0.2, 0.35, 0.45}, Lo: []float64{0.1, 0.3, 0.4}, Hi: []float64{0.3, 0.4, 0.5}, Seeds: 3, K: 2},
	}
	p, err := AblationCurves("ablation", curves)
	if err != nil {
		t.Fatal(err)
	}
	checkFigure(t, "ablation", [][]*plot.Plot{{p}}, 8, 5, "grpo: mean of 3 seeds", "gspo: mean of 3 seeds", "evaluation avg@2 (%)", "optimizer step")
	if _, err := AblationCurves("none", nil); err == nil {
		t.Error("no curves: want an error")
	}
}

func TestRunCurves(t *testing.T) {
	point := func(step int, avg float64) metrics.EvalPoint { return metrics.EvalPoint{Step: step, K: 2, AvgAtK: avg} }
	rs := []runs.Run{
		{Name: "demo", Evals: []metrics.EvalPoint{point(0, 0.4), point(5, 0.5), point(10, 0.6)}},
		{Name: "demo-seed2", Evals: []metrics.EvalPoint{point(0, 0.3), point(5, 0.45), point(10, 0.55)}},
	}
	for i := range rs {
		rs[i].Final = rs[i].Evals[len(rs[i].Evals)-1]
	}
	p, err := RunCurves("the demo", rs)
	if err != nil {
		t.Fatal(err)
	}
	checkFigure(t, "runs", [][]*plot.Plot{{p}}, 8, 5, "the demo", "demo-seed2", "evaluation avg@2 (%)", "optimizer step")
	if p.Y.Max < 60 || p.Y.Min != 0 {
		t.Errorf("y axis %g..%g, want 0 to at least 60 (the points in %%)", p.Y.Min, p.Y.Max)
	}
	if _, err := RunCurves("none", nil); err == nil {
		t.Error("no runs: want an error")
	}
	other := rs[1]
	other.Evals = []metrics.EvalPoint{{Step: 0, K: 4, AvgAtK: 0.3}}
	if _, err := RunCurves("", []runs.Run{rs[0], other}); err == nil || !strings.Contains(err.Error(), "demo-seed2") {
		t.Errorf("mixed k: error %v, want one naming the run", err)
	}
	if _, err := RunCurves("", []runs.Run{rs[0], {Name: "empty"}}); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("no evaluation: error %v, want one naming the run", err)
	}
}

// TestRunCurvesRefusesAnotherK checks that a run evaluated at another k than
// the first run, consistently so (its final evaluation at that k too), is
// refused, and that the error names both runs in their places.
func TestRunCurvesRefusesAnotherK(t *testing.T) {
	demo := runs.Run{Name: "demo", Evals: []metrics.EvalPoint{{Step: 0, K: 2, AvgAtK: 0.4}, {Step: 5, K: 2, AvgAtK: 0.5}}}
	wide := runs.Run{Name: "demo-k4", Evals: []metrics.EvalPoint{{Step: 0, K: 4, AvgAtK: 0.3}, {Step: 5, K: 4, AvgAtK: 0.35}}}
	for _, r := range []*runs.Run{&demo, &wide} {
		r.Final = r.Evals[len(r.Evals)-1]
	}
	_, err := RunCurves("", []runs.Run{demo, wide})
	if want := "plots: run demo-k4: evaluation at step 0 has k 4, run demo has 2"; err == nil || err.Error() != want {
		t.Errorf("another k: error %v, want %q", err, want)
	}
	if _, err := RunCurves("", []runs.Run{wide, wide}); err != nil {
		t.Errorf("the same k 4 in every run: %v", err)
	}
}
