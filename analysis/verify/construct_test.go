package verify_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mathrl/mathrl/analysis/scorer/validation"
	"github.com/mathrl/mathrl/analysis/verify"
	"github.com/mathrl/mathrl/data"
	"github.com/mathrl/mathrl/internal/testenv"
)

// datasetLabels returns the labels of MATH train and test and AIME 2024/2025.
func datasetLabels(t testing.TB) []string {
	dir := testenv.DataDir(t, "math_test.jsonl")
	var labels []string
	for _, name := range []string{"math_train", "math_test", "aime24", "aime25"} {
		rows, err := data.LoadSet(dir, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if r.Answer != nil {
				labels = append(labels, *r.Answer)
			}
		}
	}
	return labels
}

// restatements are the ways a model restates a label answer, each a
// function from the label to a response (the response "" when the
// restatement does not apply to that label).
var restatements = []struct {
	name string
	say  func(label string) string
}{
	{"dfrac", func(l string) string { return ifChanged(l, strings.ReplaceAll(l, `\frac`, `\dfrac`)) }},
	{"no spaces", func(l string) string { return ifChanged(l, spaceNotAfterMacro.ReplaceAllString(l, "$1")) }},
	{"no left/right", func(l string) string {
		return ifChanged(l, strings.NewReplacer(`\left`, "", `\right`, "").Replace(l))
	}},
	{"x = prefix", func(l string) string {
		if strings.ContainsAny(l, "=<>\n") || strings.Contains(l, `\le`) || strings.Contains(l, `\ge`) ||
			strings.Contains(l, `\text`) || strings.Contains(l, ",") {
			return ""
		}
		return `\boxed{x = ` + l + `}`
	}},
	{"$-wrapped", func(l string) string { return `\boxed{$` + l + `$}` }},
	{"text-wrapped", func(l string) string {
		if strings.Contains(l, `\text`) {
			return ""
		}
		return `\boxed{\text{` + l + `}}`
	}},
	{"Answer: boxed", func(l string) string { return "So we are done.\nAnswer: \\boxed{" + l + "}" }},
	{"Answer: $", func(l string) string { return "So we are done.\nAnswer: $" + l + "$" }},
	{"two boxes", func(l string) string {
		return "First we find \\boxed{" + l + "}.\n\nChecking again, the answer is \\boxed{" + l + "}."
	}},
}

var spaceNotAfterMacro = regexp.MustCompile(`((?:^|[^a-zA-Z\\])(?:[^\\a-zA-Z]|[a-zA-Z]*[^a-zA-Z\\]))\s+`)

func ifChanged(before, after string) string {
	if after == before {
		return ""
	}
	return `\boxed{` + after + `}`
}

// TestConstructions scores the correct-by-construction response of every
// MATH and AIME label in the five validation templates (each must be
// accepted) and the response that states its partner label, another
// problem's answer (each must be rejected unless the two labels are the
// same value, listed in sameValue).
func TestConstructions(t *testing.T) {
	labels := datasetLabels(t)
	partners := validation.Partners(labels)
	var slowest time.Duration
	var slowLabel string
	tpMiss, fpHit := 0, 0
	for i, l := range labels {
		for _, variant := range validation.Variants {
			start := time.Now()
			v, err := verify.Check(validation.Response(variant, l), l)
			if d := time.Since(start); d > slowest {
				slowest, slowLabel = d, l
			}
			if err != nil || !v.Correct {
				tpMiss++
				if tpMiss <= 40 {
					t.Errorf("%s: label %q rejected its own answer (%q): %v", variant, l, v.Answer, err)
				}
			}
			if partners[i] < 0 {
				continue
			}
			other := labels[partners[i]]
			v, err = verify.Check(validation.Response(variant, other), l)
			if err != nil || v.Correct {
				fpHit++
				if fpHit <= 40 {
					t.Errorf("%s: label %q accepted %q: %v", variant, l, other, err)
				}
			}
		}
	}
	for i, l := range labels {
		for _, r := range restatements {
			resp := r.say(l)
			if resp == "" {
				continue
			}
			if v, err := verify.Check(resp, l); err != nil || !v.Correct {
				tpMiss++
				if tpMiss <= 60 {
					t.Errorf("%s: label %q rejected %q (read %q): %v", r.name, l, resp, v.Answer, err)
				}
			}
			if partners[i] < 0 {
				continue
			}
			if resp = r.say(labels[partners[i]]); resp == "" {
				continue
			}
			if v, err := verify.Check(resp, l); err != nil || v.Correct {
				fpHit++
				if fpHit <= 60 {
					t.Errorf("%s: label %q accepted %q: %v", r.name, l, resp, err)
				}
			}
		}
	}
	t.Logf("%d labels: %d correct rejected, %d wrong accepted; slowest call %v on %q", len(labels), tpMiss, fpHit, slowest, slowLabel)
}
