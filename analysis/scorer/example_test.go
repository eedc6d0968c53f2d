package scorer_test

import (
	"errors"
	"fmt"

	"github.com/mathrl/mathrl/analysis/scorer"
)

func ExampleScore() {
	response := "<think>\nscratch work\n</think>\n\nSo the answer is $\\boxed{\\dfrac12}$.\nAnswer: 1/2"
	for _, name := range scorer.Names() {
		r, err := scorer.Score(name, response, `\frac{1}{2}`)
		if errors.Is(err, scorer.ErrNonNumericLabel) {
			fmt.Printf("%s: cannot score: non-numeric label\n", name)
			continue
		}
		fmt.Printf("%s: reward %v\n", name, r.Reward)
	}
	// Output:
	// math: reward 1
	// dapo: cannot score: non-numeric label
	// deepscaler: reward 1
	// verify: reward 1
}

func ExampleScoreLabel() {
	// An integer label 0 is falsy in Python: math never accepts it, deepscaler does.
	zero, _ := scorer.NumberLabel("0")
	m, _ := scorer.ScoreLabel(scorer.Math, "</think>\\boxed{0}", zero)
	d, _ := scorer.ScoreLabel(scorer.DeepScaler, "</think>\\boxed{0}", zero)
	fmt.Println(m.Reward, d.Reward)
	// Output: 0 1
}
