package plots

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mathrl/mathrl/analysis/metrics"
	"github.com/mathrl/mathrl/analysis/modelcard"
	"github.com/mathrl/mathrl/analysis/runs"
	"github.com/mathrl/mathrl/analysis/scorer/validation"
	"gonum.org/v1/plot"
)

// Figure kinds that WriteFigures draws.
const (
	KindCards   = "cards"   // card_benchmarks
	KindBudgets = "budgets" // budgets_accuracy, budgets_truncation (+ _simulated)
	KindScorers = "scorers" // scorers_SET, scorers_templates_SET, scorers_restated_SET
	KindPassAtK = "passk"   // NAME (default passk); one curve per run, or per run and budget when Budgets is set
	KindTrain   = "train"   // training_NAME
)

// Inputs names the files a figure kind reads and where it writes.
type Inputs struct {
	Out        string   // figures folder
	Cards      string   // model-card CSV folder (modelcard.Load)
	Card       string   // card to draw next to the measurements; empty: none
	Samples    []string // eval-samples JSONL files (metrics.ReadSamples)
	Budgets    []int    // budgets in tokens
	K          int      // k of avg@k; 0 = the fewest samples any problem has
	Validation string   // CSV of `mathrl scorers validate`
	Set        string   // label set of the scorer figures
	Variant    string   // response template of the scorer TP/FP figure
	Metrics    string   // trainer metrics JSONL (metrics.ReadStepMetrics)
	Name       string   // figure or run name
	Resamples  int      // bootstrap resamples (0: 2000), seeded with 1 so figures are reproducible
}

// WriteFigures reads in's files, draws the figures of one kind, saves each as
// PNG and SVG into in.Out, and returns their paths without extension.
// Measured series from simulated samples are labelled SIMULATED.
func WriteFigures(what string, o Inputs) ([]string, error) {
	if o.Resamples == 0 {
		o.Resamples = 2000
	}
	var figs []figure
	var err error
	switch what {
	case KindCards:
		figs, err = cardFigures(o)
	case KindBudgets:
		figs, err = budgetFigures(o)
	case KindScorers:
		figs, err = scorerFigures(o)
	case KindPassAtK:
		figs, err = passAtKFigures(o)
	case KindTrain:
		return trainingFigure(o)
	default:
		return nil, fmt.Errorf("plots: unknown figure %q", what)
	}
	if err != nil {
		return nil, err
	}
	var saved []string
	for _, f := range figs {
		if f.err != nil {
			return nil, f.err
		}
		base := filepath.Join(o.Out, f.name)
		if err := Save(f.plot, base); err != nil {
			return nil, err
		}
		saved = append(saved, base)
	}
	return saved, nil
}

// cardFigures draws the model cards' benchmark scores (KindCards).
func cardFigures(o Inputs) ([]figure, error) {
	var figs []figure
	cards, err := modelcard.Load(o.Cards)
	if err != nil {
		return nil, err
	}
	p, err := CardBenchmarks(cards)
	figs = append(figs, figure{"card_benchmarks", p, err})
	return figs, nil
}

// budgetFigures draws avg@k and truncation against the budget (KindBudgets).
func budgetFigures(o Inputs) ([]figure, error) {
	var figs []figure
	samples, err := readSamples(o.Samples)
	if err != nil {
		return nil, err
	}
	var cardRows []modelcard.BudgetRow
	if o.Card != "" {
		card, err := loadCard(o.Cards, o.Card)
		if err != nil {
			return nil, err
		}
		cardRows = card.Budgets
	}
	keys, runs := metrics.SplitRuns(samples)
	var series []BudgetSeries
	for _, key := range keys {
		k := o.K
		if k == 0 {
			k = metrics.MinSamples(runs[key])
		}
		rows, err := metrics.BudgetTable(runs[key], o.Budgets, k, o.Resamples, rand.New(rand.NewPCG(1, 0)))
		if err != nil {
			return nil, fmt.Errorf("plots: %s: %w", key.Model, err)
		}
		series = append(series, NewBudgetSeries(rows))
	}
	suffix := ""
	for _, s := range series {
		if s.Simulated() {
			suffix = "_simulated"
		}
	}
	acc, err := BudgetAccuracy(cardRows, series)
	figs = append(figs, figure{"budgets_accuracy" + suffix, acc, err})
	tr, err := BudgetTruncation(cardRows, series)
	figs = append(figs, figure{"budgets_truncation" + suffix, tr, err})
	return figs, nil
}

// scorerFigures draws the scorer validation counts (KindScorers).
func scorerFigures(o Inputs) ([]figure, error) {
	var figs []figure
	counts, err := ReadValidationCSVFile(o.Validation)
	if err != nil {
		return nil, err
	}
	var cardRows []modelcard.ScorerRow
	if o.Card != "" {
		card, err := loadCard(o.Cards, o.Card)
		if err != nil {
			return nil, err
		}
		for _, r := range card.Scorers {
			if r.Set == o.Set {
				cardRows = append(cardRows, r)
			}
		}
	}
	p, err := ScorerCard(counts, o.Set, o.Variant, cardRows)
	figs = append(figs, figure{"scorers_" + o.Set, p, err})
	templates, restated := splitTemplates(counts)
	v, err := ScorerVariants(templates, o.Set)
	figs = append(figs, figure{"scorers_templates_" + o.Set, v, err})
	if hasSet(restated, o.Set) {
		r, err := ScorerVariants(restated, o.Set)
		figs = append(figs, figure{"scorers_restated_" + o.Set, r, err})
	}
	return figs, nil
}

// splitTemplates separates the counts of the five response templates
// (validation.Variants) from those of the restated answers.
func splitTemplates(counts []validation.Count) (templates, restated []validation.Count) {
	for _, c := range counts {
		if slices.Contains(validation.Variants, c.Variant) {
			templates = append(templates, c)
		} else {
			restated = append(restated, c)
		}
	}
	return templates, restated
}

func hasSet(counts []validation.Count, set string) bool {
	return slices.ContainsFunc(counts, func(c validation.Count) bool { return c.Set == set })
}

// passAtKFigures draws pass@k curves (KindPassAtK).
func passAtKFigures(o Inputs) ([]figure, error) {
	var figs []figure
	samples, err := readSamples(o.Samples)
	if err != nil {
		return nil, err
	}
	keys, runs := metrics.SplitRuns(samples)
	var series []PassAtKSeries
	for _, key := range keys {
		budgets := o.Budgets
		if len(budgets) == 0 {
			budgets = []int{key.Budget}
		}
		for _, b := range budgets {
			cut, err := metrics.AtBudget(runs[key], b)
			if err != nil {
				return nil, err
			}
			s, err := metrics.Summarize(cut, metrics.MinSamples(cut))
			if err != nil {
				return nil, fmt.Errorf("plots: %s: %w", key.Model, err)
			}
			series = append(series, PassAtKSeries{Label: fmt.Sprintf("%s, %d tokens", seriesLabel(s), b), Summary: s})
		}
	}
	p, err := PassAtK(series)
	name := o.Name
	if name == "" {
		name = "passk"
	}
	figs = append(figs, figure{name, p, err})
	return figs, nil
}

// trainingFigure draws and saves the training curves of a metrics file with
// the evaluations beside it (KindTrain), as training_NAME.
func trainingFigure(o Inputs) ([]string, error) {
	f, err := os.Open(o.Metrics)
	if err != nil {
		return nil, err
	}
	steps, err := metrics.ReadStepMetrics(f, o.Metrics)
	f.Close()
	if err != nil {
		return nil, err
	}
	name := o.Name
	if name == "" {
		name = filepath.Base(filepath.Dir(o.Metrics))
	}
	evals, err := readEvalsBeside(o.Metrics)
	if err != nil {
		return nil, err
	}
	grid, err := TrainingCurves(name, steps, evals)
	if err != nil {
		return nil, err
	}
	base := filepath.Join(o.Out, "training_"+name)
	if err := SaveGrid(grid, TrainingWidth, TrainingHeight, base); err != nil {
		return nil, err
	}
	return []string{base}, nil
}

type figure struct {
	name string
	plot *plot.Plot
	err  error
}

func readSamples(paths []string) ([]metrics.Sample, error) {
	var all []metrics.Sample
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		s, err := metrics.ReadSamples(f, p)
		f.Close()
		if err != nil {
			return nil, err
		}
		all = append(all, s...)
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("plots: no samples in %s", strings.Join(paths, ", "))
	}
	return all, nil
}

func loadCard(dir, id string) (modelcard.Card, error) {
	cards, err := modelcard.Load(dir)
	if err != nil {
		return modelcard.Card{}, err
	}
	return modelcard.Find(cards, id)
}

// seriesLabel names a run in legends, saying SIMULATED for simulated samples.
func seriesLabel(s metrics.Summary) string {
	if s.Model == metrics.SimulatedModel {
		return "SIMULATED samples (not a model)"
	}
	return "mathrl: " + s.Model
}

// readEvalsBeside reads the eval.jsonl that a training run writes next to its
// metrics file; none is no error.
func readEvalsBeside(metricsPath string) ([]metrics.EvalPoint, error) {
	path := filepath.Join(filepath.Dir(metricsPath), runs.EvalsFile)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return metrics.ReadEvalPoints(f, path)
}
