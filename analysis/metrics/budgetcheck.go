package metrics

import (
	"fmt"
	"sort"
	"strings"
)

// A BudgetCheck compares, sample by sample, what AtBudget derives at budget b
// from a generation at a larger budget with a second generation at b that used
// the same sampling seeds. It is the test of the claim in the package
// documentation that deriving a budget equals generating at it.
type BudgetCheck struct {
	Budget int          // b
	Kinds  []CheckCount // one row per kind of sample, in the order of the Kind constants
	// Finishes counts the pairs by "derived finish -> generated finish" (for
	// example "length -> stop").
	Finishes map[string]int
}

// The kinds of sample a BudgetCheck tells apart, by the large-budget sample.
const (
	KindNoTools = "ended within b, no tool call" // the derivation keeps it as it is
	KindTools   = "ended within b, tool calls"   // the same, but the response continues after a tool response
	KindCut     = "longer than b"                // the derivation cuts it at b and scores it 0
)

// CheckCount counts one kind of pair in a BudgetCheck.
type CheckCount struct {
	Kind      string
	Pairs     int // samples of this kind
	Identical int // same finish, score and token count, and the same text (a cut one: the generated text starts the long one)
	Outcome   int // same finish and score, not identical
	Differ    int // another finish or score
	// AfterTool counts the pairs whose texts first differ after a tool
	// response of the large-budget sample: the random stream had moved on
	// while other sequences of the batch kept generating.
	AfterTool int
}

// CheckBudget compares derived (the samples of one generation at a large
// budget, before derivation) at the budget of generated (one generation at a
// smaller budget b with the same seeds). The two must hold the same (problem,
// sample) pairs with the same seeds.
func CheckBudget(large, generated []Sample) (BudgetCheck, error) {
	if len(generated) == 0 {
		return BudgetCheck{}, fmt.Errorf("metrics: budget check: no generated samples")
	}
	b := generated[0].Budget
	derived, err := AtBudget(large, b)
	if err != nil {
		return BudgetCheck{}, err
	}
	at, err := indexPairs(generated, b)
	if err != nil {
		return BudgetCheck{}, err
	}
	if len(at) != len(large) {
		return BudgetCheck{}, fmt.Errorf("metrics: budget check: %d samples at budget %d, %d at the large budget", len(at), b, len(large))
	}
	check := BudgetCheck{Budget: b, Finishes: map[string]int{}}
	counts := map[string]*CheckCount{}
	for _, k := range []string{KindNoTools, KindTools, KindCut} {
		counts[k] = &CheckCount{Kind: k}
	}
	for i, s := range large {
		g, ok := at[pairKey{s.ProblemID, s.SampleIndex}]
		if !ok {
			return BudgetCheck{}, fmt.Errorf("metrics: budget check: problem %q sample %d has no sample at budget %d", s.ProblemID, s.SampleIndex, b)
		}
		if g.Seed != s.Seed {
			return BudgetCheck{}, fmt.Errorf("metrics: budget check: problem %q sample %d: seed %d at budget %d, %d at %d", s.ProblemID, s.SampleIndex, g.Seed, b, s.Seed, s.Budget)
		}
		d := derived[i]
		c := counts[checkKind(s, b)]
		c.Pairs++
		check.Finishes[string(d.Finish)+" -> "+string(g.Finish)]++
		switch {
		case d.Finish != g.Finish || d.Correct() != g.Correct():
			c.Differ++
		case sameText(s, g, b):
			c.Identical++
		default:
			c.Outcome++
		}
		if divergesAfterTool(s.Response, g.Response) {
			c.AfterTool++
		}
	}
	for _, k := range []string{KindNoTools, KindTools, KindCut} {
		check.Kinds = append(check.Kinds, *counts[k])
	}
	return check, nil
}

type pairKey struct {
	problem string
	sample  int
}

// indexPairs indexes samples by (problem, sample), checking that all have budget b.
func indexPairs(samples []Sample, b int) (map[pairKey]Sample, error) {
	at := make(map[pairKey]Sample, len(samples))
	for _, g := range samples {
		if g.Budget != b {
			return nil, fmt.Errorf("metrics: budget check: problem %q sample %d has budget %d, the file's first sample %d", g.ProblemID, g.SampleIndex, g.Budget, b)
		}
		k := pairKey{g.ProblemID, g.SampleIndex}
		if _, dup := at[k]; dup {
			return nil, fmt.Errorf("metrics: budget check: problem %q sample %d appears twice at budget %d", g.ProblemID, g.SampleIndex, b)
		}
		at[k] = g
	}
	return at, nil
}

// checkKind classifies a large-budget sample s for budget b.
func checkKind(s Sample, b int) string {
	switch {
	case s.ResponseTokens > b:
		return KindCut
	case s.ToolCalls > 0:
		return KindTools
	default:
		return KindNoTools
	}
}

// sameText reports whether g is what the derivation says: s itself when s
// ended within b, else a start of s's text b tokens long.
func sameText(s, g Sample, b int) bool {
	if s.ResponseTokens > b {
		return g.ResponseTokens == b && strings.HasPrefix(s.Response, g.Response)
	}
	return g.ResponseTokens == s.ResponseTokens && g.Response == s.Response
}

// toolResponseTag starts a tool response in a Qwen3 chat response.
const toolResponseTag = "<tool_response>"

// divergesAfterTool reports whether the texts first differ after a tool
// response of long (a prefix of long is no divergence).
func divergesAfterTool(long, short string) bool {
	n := 0
	for n < len(long) && n < len(short) && long[n] == short[n] {
		n++
	}
	if n == len(short) {
		return false
	}
	return strings.Contains(long[:n], toolResponseTag)
}

// CheckBudgetFiles reads the eval-samples file large and each file of at
// (one smaller budget each) and checks them with CheckBudget, in the order given.
func CheckBudgetFiles(large string, at []string) ([]BudgetCheck, error) {
	ref, err := ReadSamplesFile(large)
	if err != nil {
		return nil, err
	}
	var checks []BudgetCheck
	for _, path := range at {
		gen, err := ReadSamplesFile(path)
		if err != nil {
			return nil, err
		}
		c, err := CheckBudget(ref, gen)
		if err != nil {
			return nil, fmt.Errorf("%w (%s against %s)", err, path, large)
		}
		checks = append(checks, c)
	}
	return checks, nil
}

// BudgetCheckMarkdown renders checks as one Markdown table: a row per budget
// and kind of sample, then the finish transitions that occurred.
func BudgetCheckMarkdown(checks []BudgetCheck) string {
	var b strings.Builder
	b.WriteString("| budget (tokens) | samples | pairs | identical | same finish and score | other finish or score | first differ after a tool response |\n")
	b.WriteString("|---:|---|---:|---:|---:|---:|---:|\n")
	for _, c := range checks {
		for _, k := range c.Kinds {
			fmt.Fprintf(&b, "| %d | %s | %d | %d | %d | %d | %d |\n", c.Budget, k.Kind, k.Pairs, k.Identical, k.Outcome, k.Differ, k.AfterTool)
		}
	}
	b.WriteString("\n| budget (tokens) | finish derived -> generated | pairs |\n|---:|---|---:|\n")
	for _, c := range checks {
		keys := make([]string, 0, len(c.Finishes))
		for k := range c.Finishes {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "| %d | %s | %d |\n", c.Budget, k, c.Finishes[k])
		}
	}
	return b.String()
}
