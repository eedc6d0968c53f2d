package plots

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"

	"github.com/mathrl/mathrl/analysis/modelcard"
	"github.com/mathrl/mathrl/analysis/scorer/validation"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// validationHeader is the header validation.WriteCSV writes.
var validationHeader = []string{"set", "scorer", "variant", "labels", "tp", "fp", "errors"}

// ReadValidationCSVFile reads the validation.csv at path (see ReadValidationCSV).
func ReadValidationCSVFile(path string) ([]validation.Count, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("plots: %w (run `mathrl scorers validate` first)", err)
	}
	defer f.Close()
	return ReadValidationCSV(f, path)
}

// ReadValidationCSV reads the counts that `mathrl scorers validate` writes to
// results/scorer_validation/validation.csv (validation.WriteCSV). A bad header
// or cell is an error naming name, the line and the column.
func ReadValidationCSV(r io.Reader, name string) ([]validation.Count, error) {
	cr := csv.NewReader(r)
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("plots: %s:1: %w", name, err)
	}
	if !slices.Equal(head, validationHeader) {
		return nil, fmt.Errorf("plots: %s:1: header %q, want %q", name, head, validationHeader)
	}
	var counts []validation.Count
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("plots: %s: %w", name, err)
		}
		line, _ := cr.FieldPos(0)
		c := validation.Count{Set: rec[0], Scorer: rec[1], Variant: rec[2]}
		for i, dst := range []*int{&c.Labels, &c.TP, &c.FP, &c.Errors} {
			n, err := strconv.Atoi(rec[3+i])
			if err != nil || n < 0 {
				return nil, fmt.Errorf("plots: %s:%d: column %q: want a non-negative integer, got %q", name, line, head[3+i], rec[3+i])
			}
			*dst = n
		}
		for col, v := range map[string]string{"set": c.Set, "scorer": c.Scorer, "variant": c.Variant} {
			if v == "" {
				return nil, fmt.Errorf("plots: %s:%d: column %q: empty", name, line, col)
			}
		}
		if c.TP > c.Labels || c.FP > c.Labels || c.Errors > c.Labels {
			return nil, fmt.Errorf("plots: %s:%d: column \"tp\": tp %d, fp %d or errors %d exceeds labels %d", name, line, c.TP, c.FP, c.Errors, c.Labels)
		}
		counts = append(counts, c)
	}
	if len(counts) == 0 {
		return nil, fmt.Errorf("plots: %s: no rows", name)
	}
	return counts, nil
}

// ScorerCard draws, for one set and response template, how many
// correct-by-construction responses (TP) and wrong ones (FP) each scorer
// accepted, and how many labels it could not score, next to the card's TP
// and FP where the card gives them (card may be nil; it covers slime's
// scorers, not verify).
func ScorerCard(counts []validation.Count, set, variant string, card []modelcard.ScorerRow) (*plot.Plot, error) {
	var rows []validation.Count
	for _, c := range counts {
		if c.Set == set && c.Variant == variant {
			rows = append(rows, c)
		}
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("plots: no validation counts for set %q, template %q", set, variant)
	}
	labels := rows[0].Labels
	p := newPlot(fmt.Sprintf("What each scorer accepts: %s (%d labels), template %s", set, labels, variant),
		"scorer", fmt.Sprintf("responses (count, of %d labels)", labels))
	names := make([]string, len(rows))
	for i, r := range rows {
		names[i] = r.Scorer
	}
	type group struct {
		label string
		value func(name string) (float64, bool)
	}
	cardValue := func(tp bool) func(string) (float64, bool) {
		return func(name string) (float64, bool) {
			for _, c := range card {
				if c.Scorer == name && c.Variant == variant {
					if tp {
						return float64(c.TP), true
					}
					return float64(c.FP), true
				}
			}
			return 0, false
		}
	}
	ours := func(f func(validation.Count) int) func(string) (float64, bool) {
		return func(name string) (float64, bool) {
			for _, r := range rows {
				if r.Scorer == name {
					return float64(f(r)), true
				}
			}
			return 0, false
		}
	}
	groups := []group{
		{"mathrl: correct accepted (TP)", ours(func(c validation.Count) int { return c.TP })},
		{"mathrl: wrong accepted (FP)", ours(func(c validation.Count) int { return c.FP })},
		{"mathrl: could not score", ours(func(c validation.Count) int { return c.Errors })},
	}
	if len(card) > 0 {
		groups = append(groups,
			group{fmt.Sprintf("card %s: TP", card[0].Card), cardValue(true)},
			group{fmt.Sprintf("card %s: FP", card[0].Card), cardValue(false)})
	}
	width := vg.Points(22)
	for gi, g := range groups {
		var vals plotter.Values
		var xs []float64
		var text []string
		for i, n := range names {
			if v, ok := g.value(n); ok {
				vals = append(vals, v)
				xs = append(xs, float64(i))
				text = append(text, strconv.Itoa(int(v)))
			}
		}
		if len(vals) == 0 {
			continue
		}
		if xs[len(xs)-1] != float64(len(xs)-1) {
			// bars stand at consecutive positions: the card may leave out only the last scorers (verify)
			return nil, errors.New("plots: the card's scorer table leaves out a scorer before one it covers")
		}
		bars, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return nil, fmt.Errorf("plots: %w", err)
		}
		bars.Offset = width * vg.Length(float64(gi)-float64(len(groups)-1)/2)
		bars.Color = Color(gi)
		bars.LineStyle.Width = 0
		p.Add(bars)
		p.Legend.Add(g.label, bars)
		if err := addOffsetLabels(p, xs, vals, text, bars.Offset, width); err != nil {
			return nil, err
		}
	}
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(len(names))-0.4
	p.Y.Min, p.Y.Max = 0, float64(labels)
	legendAbove(p)
	return p, nil
}

// ScorerVariants draws, for one set, the share of correct-by-construction
// responses (%) each scorer accepted under each response template, in the
// order the counts give them (the five validation.Variants, or the
// validation.Restatements): what a response must look like for each scorer.
func ScorerVariants(counts []validation.Count, set string) (*plot.Plot, error) {
	var scorers, variants []string
	labels := 0
	for _, c := range counts {
		if c.Set == set {
			labels = max(labels, c.Labels)
			if !slices.Contains(scorers, c.Scorer) {
				scorers = append(scorers, c.Scorer)
			}
			if !slices.Contains(variants, c.Variant) {
				variants = append(variants, c.Variant)
			}
		}
	}
	if len(scorers) == 0 || labels == 0 {
		return nil, fmt.Errorf("plots: no validation counts for set %q", set)
	}
	what, xlabel := "template", "response template"
	if !allTemplates(variants) {
		what, xlabel = "restated answer", "answer restated as (boxed unless named)"
	}
	p := newPlot(fmt.Sprintf("Correct responses accepted, by %s: %s (%d labels)", what, set, labels),
		xlabel, "correct responses accepted (%)")
	width := vg.Points(min(26, 400/float64(len(variants)*len(scorers)))) // a gap between templates
	for si, s := range scorers {
		vals, err := acceptedShares(counts, set, s, variants)
		if err != nil {
			return nil, err
		}
		bars, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return nil, fmt.Errorf("plots: %w", err)
		}
		bars.Offset = width * vg.Length(float64(si)-float64(len(scorers)-1)/2)
		bars.Color = Color(si)
		bars.LineStyle.Width = 0
		p.Add(bars)
		p.Legend.Add(s, bars)
		xs := make([]float64, len(vals))
		text := make([]string, len(vals))
		for i, v := range vals {
			xs[i], text[i] = float64(i), fmt.Sprintf("%.0f", v)
		}
		if err := addOffsetLabels(p, xs, vals, text, bars.Offset, width); err != nil {
			return nil, err
		}
	}
	p.NominalX(variants...)
	p.X.Tick.Label.Font.Size = vg.Points(10)
	if len(variants) > 5 {
		// slanted, so that long template names do not run into each other
		p.X.Tick.Label.Rotation = math.Pi / 6
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YTop
	}
	p.X.Min, p.X.Max = -0.6, float64(len(variants))-0.4
	p.Y.Min, p.Y.Max = 0, 100
	legendAbove(p)
	return p, nil
}

// allTemplates reports whether every variant is one of the five response
// templates (validation.Variants) rather than a restated answer.
func allTemplates(variants []string) bool {
	for _, v := range variants {
		if !slices.Contains(validation.Variants, v) {
			return false
		}
	}
	return true
}

// acceptedShares is the share (%) of correct responses scorer s accepted on
// set under each template.
func acceptedShares(counts []validation.Count, set, s string, variants []string) (plotter.Values, error) {
	vals := make(plotter.Values, len(variants))
	for vi, v := range variants {
		found := false
		for _, c := range counts {
			if c.Set == set && c.Scorer == s && c.Variant == v && c.Labels > 0 {
				vals[vi], found = 100*float64(c.TP)/float64(c.Labels), true
			}
		}
		if !found {
			return nil, fmt.Errorf("plots: no count for set %q, scorer %q, template %q", set, s, v)
		}
	}
	return vals, nil
}

// minLevelBar is the narrowest bar whose value label is written level above
// it (three digits in the 10-point font); a narrower bar's label is written
// upwards, so that it does not run into its neighbours'.
const minLevelBar vg.Length = 16 // points

// addOffsetLabels writes text above bars of the given width drawn with the
// given offset.
func addOffsetLabels(p *plot.Plot, xs []float64, vals plotter.Values, text []string, offset, width vg.Length) error {
	xys := make(plotter.XYs, len(vals))
	for i, v := range vals {
		xys[i].X, xys[i].Y = xs[i], v
	}
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: text})
	if err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	for i := range l.TextStyle {
		l.TextStyle[i].Font = font.From(sans, 10)
		l.TextStyle[i].XAlign = draw.XCenter
		if width < minLevelBar {
			l.TextStyle[i].Font.Size = vg.Points(9)
			l.TextStyle[i].Rotation = math.Pi / 2
			l.TextStyle[i].XAlign, l.TextStyle[i].YAlign = draw.XLeft, draw.YCenter
		}
	}
	l.Offset = vg.Point{X: offset, Y: vg.Points(2)}
	p.Add(l)
	return nil
}
