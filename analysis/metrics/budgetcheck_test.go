package metrics

import (
	"strings"
	"testing"
)

// text builds a sample with a response text and tool calls.
func text(problem string, index, tokens int, finish Finish, score float64, tools int, response string) Sample {
	s := sample(problem, index, tokens, finish, score)
	s.Response, s.ToolCalls = response, tools
	return s
}

// TestCheckBudgetCountsByHand checks six pairs whose classification is worked
// out by hand, at b = 10 from a generation at 100.
func TestCheckBudgetCountsByHand(t *testing.T) {
	call := "<tool_call>x</tool_call><tool_response>1</tool_response>"
	large := []Sample{
		text("p", 0, 6, FinishStop, 1, 0, "abcdef"),      // ends within b, identical at b
		text("p", 1, 8, FinishStop, 1, 0, "abcdefgh"),    // ends within b, a different text with the same outcome
		text("p", 2, 9, FinishStop, 1, 1, call+"=1"),     // a tool call, then differs after the response
		text("q", 0, 40, FinishStop, 1, 1, call+"long"),  // longer than b: cut, and the generation at b is its start
		text("q", 1, 40, FinishStop, 1, 0, "0123456789"), // longer than b, but the generation at b stopped (stop token)
		text("q", 2, 50, FinishLength, 0, 0, "zzzz"),     // cut at 100 already: still cut at 10
	}
	for i := range large {
		large[i].Budget = 100
	}
	gen := []Sample{
		text("p", 0, 6, FinishStop, 1, 0, "abcdef"),
		text("p", 1, 7, FinishStop, 1, 0, "abcdefx"),
		text("p", 2, 9, FinishStop, 0, 1, call+"=2"),
		text("q", 0, 10, FinishLength, 0, 1, call[:10]),
		text("q", 1, 9, FinishStop, 1, 0, "012345678"),
		text("q", 2, 10, FinishLength, 0, 0, "zz"),
	}
	for i := range gen {
		gen[i].Budget = 10
	}
	c, err := CheckBudget(large, gen)
	if err != nil {
		t.Fatal(err)
	}
	want := []CheckCount{
		{Kind: KindNoTools, Pairs: 2, Identical: 1, Outcome: 1},
		{Kind: KindTools, Pairs: 1, Differ: 1, AfterTool: 1},
		{Kind: KindCut, Pairs: 3, Identical: 2, Differ: 1},
	}
	if c.Budget != 10 || len(c.Kinds) != 3 {
		t.Fatalf("got %+v", c)
	}
	for i, w := range want {
		if c.Kinds[i] != w {
			t.Errorf("kind %d: got %+v, want %+v", i, c.Kinds[i], w)
		}
	}
	if c.Finishes["length -> stop"] != 1 || c.Finishes["length -> length"] != 2 || c.Finishes["stop -> stop"] != 3 {
		t.Errorf("finishes %v", c.Finishes)
	}
	md := BudgetCheckMarkdown([]BudgetCheck{c})
	if !strings.Contains(md, "| 10 | longer than b | 3 | 2 | 0 | 1 | 0 |") {
		t.Errorf("markdown:\n%s", md)
	}
}

func TestCheckBudgetRefusesMismatchedFiles(t *testing.T) {
	large := []Sample{sample("p", 0, 5, FinishStop, 1), sample("p", 1, 5, FinishStop, 1)}
	for i := range large {
		large[i].Budget = 100
	}
	at := func(b int, ss ...Sample) []Sample {
		for i := range ss {
			ss[i].Budget = b
		}
		return ss
	}
	otherSeed := sample("p", 1, 5, FinishStop, 1)
	otherSeed.Seed = 99
	for name, gen := range map[string][]Sample{
		"missing pair": at(10, sample("p", 0, 5, FinishStop, 1)),
		"other pair":   at(10, sample("p", 0, 5, FinishStop, 1), sample("r", 1, 5, FinishStop, 1)),
		"duplicate":    at(10, sample("p", 0, 5, FinishStop, 1), sample("p", 0, 5, FinishStop, 1)),
		"two budgets":  append(at(10, sample("p", 0, 5, FinishStop, 1)), at(20, sample("p", 1, 5, FinishStop, 1))...),
		"other seed":   at(10, sample("p", 0, 5, FinishStop, 1), otherSeed),
		"empty":        nil,
	} {
		if _, err := CheckBudget(large, gen); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
