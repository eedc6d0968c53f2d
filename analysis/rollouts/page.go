package rollouts

import (
	"fmt"
	"io"
	"path/filepath"
)

// WritePage writes the HTML page (WriteHTML) of the rollout recorded at step
// in the run folder run: every sample, or only sample (its place in the file,
// from 0) when sample ≥ 0. A step that was not recorded gives Load's error,
// which lists the recorded steps.
func WritePage(w io.Writer, run string, step, sample int) error {
	recs, err := Load(run, step)
	if err != nil {
		return err
	}
	if len(recs) == 0 {
		return fmt.Errorf("rollouts: %s: no samples", Path(run, step))
	}
	title := fmt.Sprintf("%s: training rollout %d, sampled at step %d", filepath.Base(filepath.Clean(run)), recs[0].Rollout, step)
	if sample >= 0 {
		if sample >= len(recs) {
			return fmt.Errorf("rollouts: %s: sample %d: the step has samples 0 to %d", Path(run, step), sample, len(recs)-1)
		}
		recs = recs[sample : sample+1]
	}
	return WriteHTML(w, recs, HTMLOptions{Title: title})
}

// Contrast returns a correct and a wrong sample (in that order) of the first
// group of recs that has both, the pair whose advantages differ in sign; nil
// when no group has both.
func Contrast(recs []Record) []Record {
	right, wrong := map[int]int{}, map[int]int{} // group -> first sample of that verdict
	for i, r := range recs {
		m := wrong
		if r.Correct {
			m = right
		}
		if _, ok := m[r.Group]; !ok {
			m[r.Group] = i
		}
	}
	for _, r := range recs {
		a, okA := right[r.Group]
		b, okB := wrong[r.Group]
		if okA && okB {
			return []Record{recs[a], recs[b]}
		}
	}
	return nil
}

// ContrastHTML writes, as an HTML fragment for a notebook, the Contrast pair
// of the rollout recorded at step in the run folder run, or all of its first
// group when no group has a correct and a wrong sample.
func ContrastHTML(w io.Writer, run string, step int) error {
	recs, err := Load(run, step)
	if err != nil {
		return err
	}
	pair := Contrast(recs)
	title := fmt.Sprintf("step %d: a correct and a wrong sample of one group", step)
	if pair == nil {
		for _, r := range recs {
			if r.Group == recs[0].Group {
				pair = append(pair, r)
			}
		}
		title = fmt.Sprintf("step %d: no group has both a correct and a wrong sample; the first group", step)
	}
	return WriteHTML(w, pair, HTMLOptions{Title: title, Fragment: true})
}

// SummaryMarkdown returns the Markdown table (Markdown) of every recorded
// step of the run folder run.
func SummaryMarkdown(run string) (string, error) {
	steps, err := Steps(run)
	if err != nil {
		return "", err
	}
	var sums []Summary
	for _, step := range steps {
		recs, err := Load(run, step)
		if err != nil {
			return "", err
		}
		sums = append(sums, Summarize(recs))
	}
	return Markdown(sums), nil
}
