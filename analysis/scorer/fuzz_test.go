package scorer

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// Seeds live in testdata/fuzz/<FuzzName>/ (taken from the tricky-case table and
// from the perturbations of the reference verdicts). Run for example
//
//	go test -run '^$' -fuzz FuzzNormalize -fuzztime 20s ./analysis/scorer

// withDeadline fails the test when fn runs longer than d (a hang).
func withDeadline(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not finish within %v", what, d)
	}
}

func FuzzExtract(f *testing.F) {
	f.Add(`so \boxed{42}.`)
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := ExtractBoxed(s)
		if !ok {
			if got != "" {
				t.Fatalf("ExtractBoxed(%q) = %q, false", s, got)
			}
			return
		}
		box := `\boxed{` + got + "}"
		i := strings.LastIndex(s, `\boxed`)
		if !strings.HasPrefix(s[i:], box) {
			t.Fatalf("ExtractBoxed(%q) = %q, not the last box", s, got)
		}
		if strings.Count(got, "{")-strings.Count(got, "}") != 0 {
			t.Fatalf("ExtractBoxed(%q) = %q: unbalanced", s, got)
		}
	})
}

func FuzzMathdNormalize(f *testing.F) {
	f.Add(`\dfrac12`)
	f.Fuzz(func(t *testing.T, s string) {
		var a, b string
		withDeadline(t, 5*time.Second, "MathdNormalize", func() { a, b = MathdNormalize(s), MathdNormalize(s) })
		if a != b {
			t.Fatalf("MathdNormalize(%q) not deterministic: %q, %q", s, a, b)
		}
	})
}

// FuzzNormalize runs the sympy-path normaliser and the whole math scorer (with
// the symbolic check, which has its own per-call deadline) on fuzzed answers.
func FuzzNormalize(f *testing.F) {
	f.Add(`\frac{1}{\sqrt{2}}`, `\frac{\sqrt{2}}{2}`)
	f.Fuzz(func(t *testing.T, given, truth string) {
		withDeadline(t, 20*time.Second, "Normalize and MathCorrect", func() {
			n := Normalize(given)
			if strings.ContainsAny(n, " {}") {
				t.Errorf("Normalize(%q) = %q keeps spaces or braces", given, n)
			}
			MathCorrect(`\boxed{`+given+`}`, TextLabel(truth))
			DeepScalerCorrect(`</think>\boxed{`+given+`}`, TextLabel(truth))
			splitTuple(n)
		})
	})
}

func FuzzDapo(f *testing.F) {
	f.Add("work\nAnswer: 42", "42")
	f.Fuzz(func(t *testing.T, response, label string) {
		var r Result
		var err error
		withDeadline(t, 5*time.Second, "DapoScore", func() { r, err = DapoScore(response, TextLabel(label)) })
		if err != nil {
			if !errors.Is(err, ErrNonNumericLabel) {
				t.Fatalf("DapoScore(%q, %q): unexpected error %v", response, label, err)
			}
			return
		}
		if r.Reward != 1 && r.Reward != -1 || r.Correct != (r.Reward == 1) {
			t.Fatalf("DapoScore(%q, %q) = %+v", response, label, r)
		}
		if r.Correct {
			if truth, _ := DapoTruth(label); truth != r.Pred {
				t.Fatalf("DapoScore(%q, %q) correct with pred %q != truth %q", response, label, r.Pred, truth)
			}
		}
	})
}
