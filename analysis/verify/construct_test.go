package verify_test

import (
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

// TestConstructions scores the correct-by-construction response of every
// MATH and AIME label in the five validation templates and in the
// restatements (each must be accepted), and the same responses stating the
// partner label, another problem's non-equivalent answer (each must be
// rejected).
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
		for _, r := range validation.Restatements {
			resp := r.Say(l)
			if resp == "" {
				continue
			}
			if v, err := verify.Check(resp, l); err != nil || !v.Correct {
				tpMiss++
				if tpMiss <= 60 {
					t.Errorf("%s: label %q rejected %q (read %q): %v", r.Name, l, resp, v.Answer, err)
				}
			}
			if partners[i] < 0 {
				continue
			}
			if resp = r.Say(labels[partners[i]]); resp == "" {
				continue
			}
			if v, err := verify.Check(resp, l); err != nil || v.Correct {
				fpHit++
				if fpHit <= 60 {
					t.Errorf("%s: label %q accepted %q: %v", r.Name, l, resp, err)
				}
			}
		}
	}
	t.Logf("%d labels: %d correct rejected, %d wrong accepted; slowest call %v on %q", len(labels), tpMiss, fpHit, slowest, slowLabel)
}
