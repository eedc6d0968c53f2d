package modelcard

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Benchmark is one published score (file <card>_benchmarks.csv).
type Benchmark struct {
	Card         string  // card id
	Model        string  // the model the score is for
	Benchmark    string  // e.g. "AIME 2024", "MATH-500"
	Metric       string  // e.g. "accuracy", "avg@16"
	BudgetTokens int     // response budget of the evaluation
	Value        float64 // a fraction in [0, 1]
	Note         string
}

// BudgetRow is one row of a card's budget table (file <card>_budgets.csv).
type BudgetRow struct {
	Card           string
	Benchmark      string
	BudgetTokens   int
	AvgAt16        float64 // fraction
	TruncationRate float64 // fraction of samples cut at the budget
	Note           string
}

// ScorerRow is one row of a card's scorer table (file <card>_scorers.csv):
// how many correct-by-construction responses (TP) and responses carrying
// another problem's label (FP) a scorer accepted.
type ScorerRow struct {
	Card    string
	Set     string // label set, e.g. "sample300"
	Variant string // response construction, e.g. "boxed+answer_line"
	Scorer  string // math, dapo, deepscaler
	Labels  int
	TP      int
	FP      int
	Note    string
}

// Setting is one training hyperparameter as the card states it
// (file <card>_training.csv); values keep the card's wording.
type Setting struct {
	Card, Key, Value, Note string
}

// Card is everything one model card publishes.
type Card struct {
	ID         string
	Benchmarks []Benchmark
	Budgets    []BudgetRow
	Scorers    []ScorerRow
	Training   []Setting
}

// Setting returns the value of a training setting, or "" if the card does not give it.
func (c Card) Setting(key string) string {
	for _, s := range c.Training {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

// The header of each table, in order.
var headers = map[string][]string{
	"benchmarks": {"card", "model", "benchmark", "metric", "budget_tokens", "value", "note"},
	"budgets":    {"card", "benchmark", "budget_tokens", "avg_at_16", "truncation_rate", "note"},
	"scorers":    {"card", "set", "variant", "scorer", "labels", "tp", "fp", "note"},
	"training":   {"card", "key", "value", "note"},
}

// Load reads every <card>_<table>.csv in dir and returns the cards sorted by id.
// Any other .csv file, a bad header, a row naming another card or a bad cell is
// an error naming file, line and column.
func Load(dir string) ([]Card, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.csv"))
	if err != nil {
		return nil, fmt.Errorf("modelcard: %w", err)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("modelcard: no .csv files in %s", dir)
	}
	byID := map[string]*Card{}
	for _, path := range paths {
		base := strings.TrimSuffix(filepath.Base(path), ".csv")
		id, table, ok := strings.Cut(base, "_")
		if _, known := headers[table]; !ok || !known || id == "" {
			return nil, fmt.Errorf("modelcard: %s: name is not <card>_{benchmarks,budgets,scorers,training}.csv", path)
		}
		c := byID[id]
		if c == nil {
			c = &Card{ID: id}
			byID[id] = c
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("modelcard: %w", err)
		}
		err = readTable(f, path, id, table, c)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	cards := make([]Card, 0, len(byID))
	for _, c := range byID {
		cards = append(cards, *c)
	}
	slices.SortFunc(cards, func(a, b Card) int { return strings.Compare(a.ID, b.ID) })
	return cards, nil
}

// Find returns the card with the given id.
func Find(cards []Card, id string) (Card, error) {
	for _, c := range cards {
		if c.ID == id {
			return c, nil
		}
	}
	return Card{}, fmt.Errorf("modelcard: no card %q", id)
}

// CellError reports a bad CSV cell.
type CellError struct {
	File   string
	Line   int
	Column string
	Err    error
}

// Error formats the error as "modelcard: FILE:LINE: column \"C\": why".
func (e *CellError) Error() string {
	return fmt.Sprintf("modelcard: %s:%d: column %q: %v", e.File, e.Line, e.Column, e.Err)
}

// Unwrap returns the underlying error.
func (e *CellError) Unwrap() error { return e.Err }

// row gives typed access to one record, recording the first bad cell.
type row struct {
	file string
	line int
	cols []string
	rec  []string
	err  error
}

func (r *row) fail(col string, err error) {
	if r.err == nil {
		r.err = &CellError{File: r.file, Line: r.line, Column: col, Err: err}
	}
}

func (r *row) str(col string) string {
	return r.rec[slices.Index(r.cols, col)]
}

func (r *row) nonEmpty(col string) string {
	s := r.str(col)
	if strings.TrimSpace(s) == "" {
		r.fail(col, errors.New("empty"))
	}
	return s
}

func (r *row) count(col string) int {
	n, err := strconv.Atoi(r.str(col))
	if err != nil || n < 0 {
		r.fail(col, fmt.Errorf("want a non-negative integer, got %q", r.str(col)))
	}
	return n
}

func (r *row) fraction(col string) float64 {
	v, err := strconv.ParseFloat(r.str(col), 64)
	if err != nil || math.IsNaN(v) || v < 0 || v > 1 {
		r.fail(col, fmt.Errorf("want a fraction in [0, 1], got %q", r.str(col)))
	}
	return v
}

func readTable(r io.Reader, file, id, table string, c *Card) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = 0 // every record as long as the header
	want := headers[table]
	head, err := cr.Read()
	if err != nil {
		return fmt.Errorf("modelcard: %s:1: %w", file, err)
	}
	if !slices.Equal(head, want) {
		return fmt.Errorf("modelcard: %s:1: header %q, want %q", file, strings.Join(head, ","), strings.Join(want, ","))
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("modelcard: %s: %w", file, err)
		}
		line, _ := cr.FieldPos(0)
		r := &row{file: file, line: line, cols: want, rec: rec}
		if got := r.str("card"); got != id {
			r.fail("card", fmt.Errorf("%q in a file of card %q", got, id))
		}
		switch table {
		case "benchmarks":
			b := Benchmark{Card: id, Model: r.nonEmpty("model"), Benchmark: r.nonEmpty("benchmark"),
				Metric: r.nonEmpty("metric"), BudgetTokens: r.count("budget_tokens"), Value: r.fraction("value"), Note: r.str("note")}
			c.Benchmarks = append(c.Benchmarks, b)
		case "budgets":
			b := BudgetRow{Card: id, Benchmark: r.nonEmpty("benchmark"), BudgetTokens: r.count("budget_tokens"),
				AvgAt16: r.fraction("avg_at_16"), TruncationRate: r.fraction("truncation_rate"), Note: r.str("note")}
			c.Budgets = append(c.Budgets, b)
		case "scorers":
			s := ScorerRow{Card: id, Set: r.nonEmpty("set"), Variant: r.nonEmpty("variant"), Scorer: r.nonEmpty("scorer"),
				Labels: r.count("labels"), TP: r.count("tp"), FP: r.count("fp"), Note: r.str("note")}
			if r.err == nil && (s.TP > s.Labels || s.FP > s.Labels) {
				r.fail("tp", fmt.Errorf("tp %d or fp %d exceeds labels %d", s.TP, s.FP, s.Labels))
			}
			c.Scorers = append(c.Scorers, s)
		case "training":
			c.Training = append(c.Training, Setting{Card: id, Key: r.nonEmpty("key"), Value: r.nonEmpty("value"), Note: r.str("note")})
		}
		if r.err != nil {
			return r.err
		}
	}
}
