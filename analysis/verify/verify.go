package verify

import "time"

// DefaultDeadline is the time Check gives one call. The work of a call is
// bounded in steps as well (see the package doc), so the deadline only
// stops a call on a machine too busy to run it.
const DefaultDeadline = time.Second

// Verdict is the outcome of one check.
type Verdict struct {
	Correct bool
	Answer  string // the response's answer that was compared; "" when it has none
	Label   string // the label's answer
}

// Check reports whether response states the answer label, within
// DefaultDeadline (see CheckWithin).
func Check(response, label string) (Verdict, error) {
	return CheckWithin(response, label, DefaultDeadline)
}

// CheckWithin reports whether response states the answer label (see the
// package doc for the rules). Past deadline d it returns ErrDeadline with an
// incorrect verdict. It is safe for concurrent use and deterministic.
func CheckWithin(response, label string, d time.Duration) (Verdict, error) {
	c := &comparer{bud: &budget{deadline: time.Now().Add(d)}}
	want := ExtractLabel(label)
	v := Verdict{Label: want}
	answers := Extract(response)
	if len(answers) == 0 || want == "" {
		return v, nil
	}
	v.Answer = answers[0]
	if v.Answer == want { // the same text is the same answer under every rule
		v.Correct = true
		return v, nil
	}
	truth := read(want, 0)
	for _, a := range answers {
		for _, r := range readings(a) {
			ok, err := c.equal(r, truth)
			if err != nil {
				return v, err
			}
			if ok {
				v.Correct, v.Answer = true, a
				return v, nil
			}
		}
	}
	return v, nil
}

// Equivalent reports whether two answers (already extracted) are the same
// answer, within DefaultDeadline.
func Equivalent(a, b string) (bool, error) {
	c := &comparer{bud: &budget{deadline: time.Now().Add(DefaultDeadline)}}
	return c.equal(read(a, 0), read(b, 0))
}
