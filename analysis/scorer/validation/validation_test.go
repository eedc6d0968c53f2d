package validation

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/analysis/scorer"
	"github.com/mathrl/mathrl/internal/testenv"
)

// specCounts is table 7.2 of the scorer specification: the counts slime's own
// scorer code gives on the real data (dapo raised on the TP and FP
// constructions of the same labels).
var specCounts = []struct {
	set                  string
	labels               int
	variant              string
	mathTP, mathFP       int
	dapoTP, dapoFP       int
	dapoRaiseTP, raiseFP int
	dsTP, dsFP           int
}{
	{"sample300", 300, "boxed", 300, 0, 0, 0, 97, 97, 0, 0},
	{"sample300", 300, "answer_line", 0, 0, 195, 0, 97, 97, 0, 0},
	{"sample300", 300, "boxed+answer_line", 300, 0, 195, 0, 97, 97, 0, 0},
	{"sample300", 300, "think+boxed", 300, 0, 0, 0, 97, 97, 300, 0},
	{"sample300", 300, "think+boxed+answer_line", 300, 0, 195, 0, 97, 97, 300, 0},
	{"math_train", 7496, "boxed", 7496, 0, 0, 0, 2355, 2355, 0, 0},
	{"math_train", 7496, "answer_line", 0, 0, 4948, 2, 2355, 2355, 0, 0},
	{"math_train", 7496, "boxed+answer_line", 7496, 0, 4948, 2, 2355, 2355, 0, 0},
	{"math_train", 7496, "think+boxed", 7496, 0, 0, 0, 2355, 2355, 7496, 0},
	{"math_train", 7496, "think+boxed+answer_line", 7496, 0, 4948, 2, 2355, 2355, 7496, 0},
	{"math_test", 5000, "boxed", 5000, 0, 0, 0, 1572, 1572, 0, 0},
	{"math_test", 5000, "answer_line", 0, 0, 3303, 3, 1572, 1572, 0, 0},
	{"math_test", 5000, "boxed+answer_line", 5000, 0, 3303, 3, 1572, 1572, 0, 0},
	{"math_test", 5000, "think+boxed", 5000, 0, 0, 0, 1572, 1572, 5000, 0},
	{"math_test", 5000, "think+boxed+answer_line", 5000, 0, 3303, 3, 1572, 1572, 5000, 0},
	{"math500", 500, "boxed", 500, 0, 0, 0, 151, 151, 0, 0},
	{"math500", 500, "answer_line", 0, 0, 335, 1, 151, 151, 0, 0},
	{"math500", 500, "boxed+answer_line", 500, 0, 335, 1, 151, 151, 0, 0},
	{"math500", 500, "think+boxed", 500, 0, 0, 0, 151, 151, 500, 0},
	{"math500", 500, "think+boxed+answer_line", 500, 0, 335, 1, 151, 151, 500, 0},
	{"aime24", 30, "boxed", 30, 0, 0, 0, 0, 0, 0, 0},
	{"aime24", 30, "answer_line", 0, 0, 23, 0, 0, 0, 0, 0},
	{"aime24", 30, "boxed+answer_line", 30, 0, 23, 0, 0, 0, 0, 0},
	{"aime24", 30, "think+boxed", 30, 0, 0, 0, 0, 0, 30, 0},
	{"aime24", 30, "think+boxed+answer_line", 30, 0, 23, 0, 0, 0, 30, 0},
	{"aime25", 30, "boxed", 30, 0, 0, 0, 0, 0, 0, 0},
	{"aime25", 30, "answer_line", 0, 0, 30, 0, 0, 0, 0, 0},
	{"aime25", 30, "boxed+answer_line", 30, 0, 30, 0, 0, 0, 0, 0},
	{"aime25", 30, "think+boxed", 30, 0, 0, 0, 0, 0, 30, 0},
	{"aime25", 30, "think+boxed+answer_line", 30, 0, 30, 0, 0, 0, 30, 0},
}

// TestSpecCounts runs the validation on the real data and compares every
// count with the specification's table.
func TestSpecCounts(t *testing.T) {
	dir := testenv.DataDir(t, "math_train.jsonl")
	if testing.Short() {
		t.Skip("scores 400k constructions; skipped with -short")
	}
	counts, err := Run(context.Background(), Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	got := map[[3]string]Count{}
	for _, c := range counts {
		got[[3]string{c.Set, c.Variant, c.Scorer}] = c
	}
	if want := len(specCounts) * len(scorer.Names()) * (len(Variants) + len(Restatements)) / len(Variants); len(counts) != want {
		t.Errorf("%d counts, want %d", len(counts), want)
	}
	for _, c := range counts {
		if c.Scorer == scorer.Verify && !slices.Contains(Variants, c.Variant) && (c.TP != c.Labels || c.FP != 0 || c.Errors != 0) {
			t.Errorf("verify on restatement %s of %s: %+v, want every correct one accepted and no wrong one", c.Variant, c.Set, c)
		}
	}
	for _, w := range specCounts {
		if w.dapoRaiseTP != w.raiseFP {
			t.Fatalf("spec row %v: raise counts differ", w)
		}
		for _, want := range []Count{
			{w.set, scorer.Math, w.variant, w.labels, w.mathTP, w.mathFP, 0},
			{w.set, scorer.Dapo, w.variant, w.labels, w.dapoTP, w.dapoFP, w.dapoRaiseTP},
			{w.set, scorer.DeepScaler, w.variant, w.labels, w.dsTP, w.dsFP, 0},
			// verify accepts every construction of the label and no other label's, in every template
			{w.set, scorer.Verify, w.variant, w.labels, w.labels, 0, 0},
		} {
			if g := got[[3]string{want.Set, want.Variant, want.Scorer}]; g != want {
				t.Errorf("got  %+v\nwant %+v", g, want)
			}
		}
	}
}

func TestResponse(t *testing.T) {
	if got, want := Response(ThinkBoxedAnswerLine, "42"),
		"<think>\nLet me think about this problem carefully.\n</think>\n\n"+
			"Let me work through the problem step by step.\n\nTherefore, the final answer is $\\boxed{42}$.\nAnswer: 42"; got != want {
		t.Errorf("Response = %q, want %q", got, want)
	}
	if got, want := Response(AnswerLine, "x"), "Let me work through the problem step by step.\n\nAnswer: x"; got != want {
		t.Errorf("Response = %q, want %q", got, want)
	}
}

func TestPartners(t *testing.T) {
	// The spec's examples of equivalent labels: x=5/5, 120^\circ/120, 7\%/7, 21\text{ dogs}/21.
	for _, p := range [][2]string{{"x=5", "5"}, {`120^\circ`, "120"}, {`7\%`, "7"}, {`21\text{ dogs}`, "21"}, {" 3 ", "3"}, {"1e3", "1000.0"}} {
		if !Equivalent(p[0], p[1]) {
			t.Errorf("Equivalent(%q, %q) = false", p[0], p[1])
		}
	}
	if Equivalent("5", "6") || Equivalent(`\frac12`, "2") {
		t.Error("different labels called equivalent")
	}
	got := Partners([]string{"5", "x=5", "6", "5.0", "7"})
	want := []int{2, 2, 3, 4, 0}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Partners = %v, want %v", got, want)
		}
	}
	if p := Partners([]string{"1", "1.0"}); p[0] != -1 || p[1] != -1 {
		t.Errorf("Partners of equivalent labels = %v, want [-1 -1]", p)
	}
}

func TestLabelsSmall(t *testing.T) {
	counts, err := Labels(context.Background(), "tiny", []string{"42", `\frac12`, "2.5"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]Count{}
	for _, c := range counts {
		byKey[c.Variant+"/"+c.Scorer] = c
	}
	check := func(key string, tp, fp, errs int) {
		t.Helper()
		c := byKey[key]
		if c.TP != tp || c.FP != fp || c.Errors != errs || c.Labels != 3 {
			t.Errorf("%s = %+v, want tp %d fp %d errors %d", key, c, tp, fp, errs)
		}
	}
	check("boxed/math", 3, 0, 0)
	check("boxed/deepscaler", 0, 0, 0)
	check("think+boxed/deepscaler", 3, 0, 0)
	// dapo: \frac12 raises; 42 matches; 2.5 becomes gt 2, so its TP fails; its
	// partner 42 fails; 42's partner \frac12 is "\frac{1}{2}" -> -1.
	check("answer_line/dapo", 1, 0, 1)
	check("boxed/dapo", 0, 0, 1)
}

func TestReports(t *testing.T) {
	counts, err := Labels(context.Background(), "tiny", []string{"42", `\frac12`}, 1)
	if err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, counts); err != nil {
		t.Fatal(err)
	}
	var back []map[string]any
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back) != 20 {
		t.Fatalf("JSON: %v, %d objects", err, len(back))
	}
	for _, k := range []string{"set", "scorer", "variant", "labels", "tp", "fp", "errors"} {
		if _, ok := back[0][k]; !ok {
			t.Errorf("JSON object lacks %q: %v", k, back[0])
		}
	}
	var tab bytes.Buffer
	WriteTable(&tab, counts)
	if lines := strings.Split(strings.TrimSpace(tab.String()), "\n"); len(lines) != 6 || !strings.Contains(lines[0], "dapo errors") {
		t.Errorf("table:\n%s", tab.String())
	}
	dir := t.TempDir()
	if err := WriteResults(dir, counts); err != nil {
		t.Fatal(err)
	}
	csv, _ := os.ReadFile(filepath.Join(dir, "validation.csv"))
	if !strings.HasPrefix(string(csv), "set,scorer,variant,labels,tp,fp,errors\ntiny,math,boxed,2,2,0,0\n") {
		t.Errorf("csv:\n%s", csv)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "validation.md"))
	if !strings.Contains(string(md), "| tiny | 2 | 2 | 0 | 1 | 0 | 1 | 0 | 2 | 0 | 2 | 0 |") {
		t.Errorf("markdown headline missing:\n%s", md)
	}
}
