package validation

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/mathrl/mathrl/analysis/scorer"
	"github.com/mathrl/mathrl/internal/atomicfile"
)

// WriteJSON writes counts as one indented JSON array.
func WriteJSON(w io.Writer, counts []Count) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if counts == nil {
		counts = []Count{}
	}
	return enc.Encode(counts)
}

// WriteCSV writes one row per count with the header
// set,scorer,variant,labels,tp,fp,errors.
func WriteCSV(w io.Writer, counts []Count) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"set", "scorer", "variant", "labels", "tp", "fp", "errors"})
	for _, c := range counts {
		cw.Write([]string{c.Set, c.Scorer, c.Variant, strconv.Itoa(c.Labels), strconv.Itoa(c.TP),
			strconv.Itoa(c.FP), strconv.Itoa(c.Errors)})
	}
	cw.Flush()
	return cw.Error()
}

// table is the wide layout: one row per set and template, TP/FP (and errors
// where a scorer had any) per scorer.
type table struct {
	header []string
	rows   [][]string
}

func wide(counts []Count) table {
	names := scorer.Names()
	hasErrors := map[string]bool{}
	for _, c := range counts {
		if c.Errors > 0 {
			hasErrors[c.Scorer] = true
		}
	}
	t := table{header: []string{"set", "labels", "variant"}}
	for _, n := range names {
		t.header = append(t.header, n+" TP", n+" FP")
		if hasErrors[n] {
			t.header = append(t.header, n+" errors")
		}
	}
	type key struct{ set, variant string }
	byKey := map[key]map[string]Count{}
	var order []key
	for _, c := range counts {
		k := key{c.Set, c.Variant}
		if byKey[k] == nil {
			byKey[k] = map[string]Count{}
			order = append(order, k)
		}
		byKey[k][c.Scorer] = c
	}
	for _, k := range order {
		cs := byKey[k]
		labels := 0
		for _, c := range cs {
			labels = c.Labels
		}
		row := []string{k.set, strconv.Itoa(labels), k.variant}
		for _, n := range names {
			c, ok := cs[n]
			if !ok {
				row = append(row, "", "")
				if hasErrors[n] {
					row = append(row, "")
				}
				continue
			}
			row = append(row, strconv.Itoa(c.TP), strconv.Itoa(c.FP))
			if hasErrors[n] {
				row = append(row, strconv.Itoa(c.Errors))
			}
		}
		t.rows = append(t.rows, row)
	}
	return t
}

// WriteTable writes counts as an aligned text table, one row per set and template.
func WriteTable(w io.Writer, counts []Count) error {
	t := wide(counts)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(t.header, "\t")+"\t")
	for _, r := range t.rows {
		fmt.Fprintln(tw, strings.Join(r, "\t")+"\t")
	}
	return tw.Flush()
}

// WriteMarkdown writes the headline table (responses with both a box and an
// Answer: line, without and with a think block) and the table of all
// templates, as Markdown.
func WriteMarkdown(w io.Writer, counts []Count) error {
	var b strings.Builder
	b.WriteString("# Scorer validation on real labels\n\n")
	b.WriteString("Each label is restated by a response that states exactly that label (TP construction) and by one that\n")
	b.WriteString("states the next non-equivalent label of the same set (FP construction). TP/FP count labels whose\n")
	b.WriteString("construction scored positive; errors count labels the scorer could not score (dapo: a label that\n")
	b.WriteString("is not a number). Produced by `mathrl scorers validate`.\n\n")
	b.WriteString("## Headline\n\n")
	b.WriteString("Non-thinking = `boxed+answer_line`; thinking = `think+boxed+answer_line`; verify's counts are\n")
	b.WriteString("non-thinking.\n\n")
	get := func(set, sc, variant string) (Count, bool) {
		for _, c := range counts {
			if c.Set == set && c.Scorer == sc && c.Variant == variant {
				return c, true
			}
		}
		return Count{}, false
	}
	b.WriteString("| set | labels | math TP | math FP | dapo TP | dapo FP | dapo errors | deepscaler TP non-thinking | deepscaler TP thinking | deepscaler FP thinking | verify TP | verify FP |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	seen := map[string]bool{}
	for _, c := range counts {
		if seen[c.Set] {
			continue
		}
		seen[c.Set] = true
		m, ok1 := get(c.Set, scorer.Math, BoxedAnswerLine)
		d, ok2 := get(c.Set, scorer.Dapo, BoxedAnswerLine)
		dsn, ok3 := get(c.Set, scorer.DeepScaler, BoxedAnswerLine)
		dst, ok4 := get(c.Set, scorer.DeepScaler, ThinkBoxedAnswerLine)
		v, ok5 := get(c.Set, scorer.Verify, BoxedAnswerLine)
		if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
			continue
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d |\n", c.Set, c.Labels, m.TP, m.FP,
			d.TP, d.FP, d.Errors, dsn.TP, dst.TP, dst.FP, v.TP, v.FP)
	}
	b.WriteString("\n## All templates\n\n")
	templates, restated := splitRestated(counts)
	writeWideMarkdown(&b, templates)
	if len(restated) > 0 {
		b.WriteString("\n## Restatements\n\n")
		b.WriteString("The label restated as models write it (validation.Restatements), each response boxed unless named\n")
		b.WriteString("otherwise; labels counts the labels a restatement applies to.\n\n")
		writeWideMarkdown(&b, restated)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// splitRestated separates the counts of the five templates from those of the
// restatements.
func splitRestated(counts []Count) (templates, restated []Count) {
	for _, c := range counts {
		if slices.Contains(Variants, c.Variant) {
			templates = append(templates, c)
		} else {
			restated = append(restated, c)
		}
	}
	return templates, restated
}

// WriteTableMarkdown writes counts as one Markdown table, one row per set and
// template.
func WriteTableMarkdown(w io.Writer, counts []Count) error {
	var b strings.Builder
	writeWideMarkdown(&b, counts)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeWideMarkdown(b *strings.Builder, counts []Count) {
	t := wide(counts)
	b.WriteString("| " + strings.Join(t.header, " | ") + " |\n")
	b.WriteString(strings.Repeat("|---", len(t.header)) + "|\n")
	for _, r := range t.rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
}

// WriteResults writes validation.csv and validation.md into dir, each atomically.
func WriteResults(dir string, counts []Count) error {
	if err := atomicfile.Write(filepath.Join(dir, "validation.csv"), func(w io.Writer) error {
		return WriteCSV(w, counts)
	}); err != nil {
		return fmt.Errorf("validation: %w", err)
	}
	if err := atomicfile.Write(filepath.Join(dir, "validation.md"), func(w io.Writer) error {
		return WriteMarkdown(w, counts)
	}); err != nil {
		return fmt.Errorf("validation: %w", err)
	}
	return nil
}
