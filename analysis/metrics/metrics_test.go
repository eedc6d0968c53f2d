package metrics

import (
	"bufio"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestPassAtKReference compares with testdata/passk_reference.tsv, computed
// exactly by Python's math.comb and fractions (testdata/passk_reference.py).
func TestPassAtKReference(t *testing.T) {
	f, err := os.Open("testdata/passk_reference.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	rows := 0
	for sc.Scan() {
		var v [3]int
		fields := strings.Split(sc.Text(), "\t")
		for i := range v {
			if v[i], err = strconv.Atoi(fields[i]); err != nil {
				t.Fatal(err)
			}
		}
		want, err := strconv.ParseFloat(fields[3], 64)
		if err != nil {
			t.Fatal(err)
		}
		if got := PassAtK(v[0], v[1], v[2]); math.Abs(got-want) > 1e-12 {
			t.Errorf("PassAtK(%d, %d, %d) = %.17g, want %.17g", v[0], v[1], v[2], got, want)
		}
		rows++
	}
	if rows < 300 {
		t.Fatalf("read only %d reference rows", rows)
	}
}

// TestPassAtKExact compares with exact big-integer binomials for every n <= 40.
func TestPassAtKExact(t *testing.T) {
	for n := 1; n <= 40; n++ {
		for c := 0; c <= n; c++ {
			for k := 1; k <= n; k++ {
				num := new(big.Int).Binomial(int64(n-c), int64(k)) // 0 when k > n-c
				den := new(big.Int).Binomial(int64(n), int64(k))
				q, _ := new(big.Rat).SetFrac(num, den).Float64()
				if got, want := PassAtK(n, c, k), 1-q; math.Abs(got-want) > 1e-12 {
					t.Fatalf("PassAtK(%d, %d, %d) = %.17g, want %.17g", n, c, k, got, want)
				}
			}
		}
	}
}

func TestPassAtKPanicsOnBadArguments(t *testing.T) {
	for _, a := range [][3]int{{4, 1, 5}, {4, 1, 0}, {4, 5, 1}, {4, -1, 1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("PassAtK(%d, %d, %d) did not panic", a[0], a[1], a[2])
				}
			}()
			PassAtK(a[0], a[1], a[2])
		}()
	}
}

func sample(problem string, index, tokens int, finish Finish, score float64) Sample {
	return Sample{Version: SamplesVersion, ProblemID: problem, SampleIndex: index, ResponseTokens: tokens,
		Finish: finish, Score: score, Scorer: "math", Budget: 100, Model: "m", Seed: 1}
}

func TestSummarizeByHand(t *testing.T) {
	samples := []Sample{
		// problem a: 1 of 4 correct, one cut at the budget, 2 tool calls in all
		sample("a", 0, 10, FinishStop, 1), sample("a", 1, 100, FinishLength, 0),
		sample("a", 2, 30, FinishStop, 0), sample("a", 3, 60, FinishToolLimit, 0),
		// problem b: 4 of 4 correct
		sample("b", 0, 20, FinishStop, 1), sample("b", 1, 20, FinishStop, 1),
		sample("b", 2, 20, FinishStop, 1), sample("b", 3, 20, FinishStop, 1),
	}
	samples[0].ToolCalls, samples[3].ToolCalls = 1, 1
	s, err := Summarize(samples, 2)
	if err != nil {
		t.Fatal(err)
	}
	// pass@2 of a = 1 - C(3,2)/C(4,2) = 1 - 3/6 = 0.5
	wantA := ProblemStats{ProblemID: "a", Samples: 4, Correct: 1, Truncated: 1, AvgAtK: 0.25, PassAtK: 0.5,
		MeanLength: 50, TruncationRate: 0.25, ToolCallsMean: 0.5}
	wantB := ProblemStats{ProblemID: "b", Samples: 4, Correct: 4, AvgAtK: 1, PassAtK: 1, MeanLength: 20}
	if !reflect.DeepEqual(s.Problems, []ProblemStats{wantA, wantB}) {
		t.Errorf("problems:\n got %+v\nwant %+v", s.Problems, []ProblemStats{wantA, wantB})
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"avg@k", s.AvgAtK, 0.625}, {"pass@k", s.PassAtK, 0.75}, {"mean length", s.MeanLength, 35},
		{"truncation", s.TruncationRate, 0.125}, {"tool calls", s.ToolCallsMean, 0.25},
		{"finished accuracy", s.FinishedAccuracy, 5.0 / 7}, {"finished", float64(s.Finished), 7},
	} {
		if math.Abs(c.got-c.want) > 1e-15 {
			t.Errorf("%s = %g, want %g", c.name, c.got, c.want)
		}
	}
	ks, pass := s.PassAtKCurve()
	// a: 1 - C(3,k)/C(4,k) = 0.25, 0.5, 0.75, 1; b: 1 always
	if want := []float64{0.625, 0.75, 0.875, 1}; !reflect.DeepEqual(ks, []int{1, 2, 3, 4}) || !closeAll(pass, want, 1e-15) {
		t.Errorf("PassAtKCurve = %v %v, want 1..4 %v", ks, pass, want)
	}
}

// TestSummarizeUnequalGroups gives two problems different numbers of samples,
// where averaging over problems and pooling all samples disagree.
//
//	problem a: 2 samples, 0 correct, 10 tokens each
//	  avg = 0/2 = 0, pass@2 = 0, mean length 10
//	problem b: 6 samples, 3 correct, 40 tokens each
//	  avg = 3/6 = 0.5, pass@2 = 1 - C(3,2)/C(6,2) = 1 - 3/15 = 0.8, mean length 40
//	over problems: avg@2 = (0 + 0.5)/2 = 0.25, pass@2 = (0 + 0.8)/2 = 0.4, length (10 + 40)/2 = 25
//	pooled instead: avg = 3/8 = 0.375; pass@2 = 1 - C(5,2)/C(8,2) = 1 - 10/28 = 0.643, or
//	weighted by samples (2*0 + 6*0.8)/8 = 0.6; length (2*10 + 6*40)/8 = 32.5
func TestSummarizeUnequalGroups(t *testing.T) {
	samples := []Sample{sample("a", 0, 10, FinishStop, 0), sample("a", 1, 10, FinishStop, 0)}
	for i := range 6 {
		samples = append(samples, sample("b", i, 40, FinishStop, float64(i%2)))
	}
	s, err := Summarize(samples, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"avg@2", s.AvgAtK, 0.25}, {"pass@2", s.PassAtK, 0.4}, {"mean length", s.MeanLength, 25},
	} {
		if math.Abs(c.got-c.want) > 1e-15 {
			t.Errorf("%s = %g, want %g (the mean over problems, not over samples)", c.name, c.got, c.want)
		}
	}
	// The curve stops at the smaller group (2): pass@1 = (0 + 0.5)/2, pass@2 as above.
	if ks, pass := s.PassAtKCurve(); !reflect.DeepEqual(ks, []int{1, 2}) || !closeAll(pass, []float64{0.25, 0.4}, 1e-15) {
		t.Errorf("PassAtKCurve = %v %v, want [1 2] [0.25 0.4]", ks, pass)
	}
}

func TestSummarizeErrors(t *testing.T) {
	mixed := []Sample{sample("a", 0, 1, FinishStop, 1), sample("a", 1, 1, FinishStop, 1)}
	mixed[1].Model = "other"
	if _, err := Summarize(mixed, 1); err == nil || !strings.Contains(err.Error(), "mix runs") {
		t.Errorf("mixed models: err = %v", err)
	}
	few := []Sample{sample("a", 0, 1, FinishStop, 1)}
	if _, err := Summarize(few, 2); err == nil || !strings.Contains(err.Error(), `problem "a" has 1 samples`) {
		t.Errorf("too few samples: err = %v", err)
	}
	if _, err := Summarize(nil, 1); err == nil {
		t.Error("no samples: no error")
	}
}

func TestErrorsCountButAreNotCorrect(t *testing.T) {
	s := []Sample{sample("a", 0, 1, FinishStop, 1), sample("a", 1, 1, FinishStop, 0)}
	s[1].Error = "label is not numeric"
	sum, err := Summarize(s, 1)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Errors != 1 || sum.AvgAtK != 0.5 {
		t.Errorf("errors %d avg %g, want 1 and 0.5", sum.Errors, sum.AvgAtK)
	}
}

// TestBootstrapMeanAgainstNormal checks the percentile interval of a large
// sample against the normal approximation mean ± 1.96 sd/sqrt(n).
func TestBootstrapMeanAgainstNormal(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	values := make([]float64, 2000)
	for i := range values {
		if rng.Float64() < 0.3 {
			values[i] = 1
		}
	}
	m, sd := 0.0, 0.0
	for _, v := range values {
		m += v
	}
	m /= float64(len(values))
	for _, v := range values {
		sd += (v - m) * (v - m)
	}
	sd = math.Sqrt(sd / float64(len(values)-1))
	half := 1.96 * sd / math.Sqrt(float64(len(values)))
	ci := BootstrapMean(values, 4000, 0.95, rand.New(rand.NewPCG(5, 6)))
	if math.Abs(ci.Lo-(m-half)) > 0.1*half || math.Abs(ci.Hi-(m+half)) > 0.1*half {
		t.Errorf("bootstrap [%g, %g], normal approximation [%g, %g]", ci.Lo, ci.Hi, m-half, m+half)
	}
	again := BootstrapMean(values, 4000, 0.95, rand.New(rand.NewPCG(5, 6)))
	if again != ci {
		t.Errorf("same seed gave %v then %v", ci, again)
	}
	if c := BootstrapMean([]float64{2, 2, 2}, 100, 0.95, rng); c != (Interval{2, 2}) {
		t.Errorf("constant values: %v, want [2, 2]", c)
	}
}

func TestAtBudget(t *testing.T) {
	in := []Sample{sample("a", 0, 40, FinishStop, 1), sample("a", 1, 100, FinishLength, 0),
		sample("a", 2, 60, FinishToolLimit, 1), sample("a", 3, 50, FinishStop, 1)}
	got, err := AtBudget(in, 50)
	if err != nil {
		t.Fatal(err)
	}
	want := []Sample{sample("a", 0, 40, FinishStop, 1), sample("a", 1, 50, FinishLength, 0),
		sample("a", 2, 50, FinishLength, 0), sample("a", 3, 50, FinishStop, 1)}
	for i := range want {
		want[i].Budget = 50
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("AtBudget(50):\n got %+v\nwant %+v", got, want)
	}
	if _, err := AtBudget(in, 200); err == nil || !strings.Contains(err.Error(), "was cut at its budget 100") {
		t.Errorf("upwards past a cut sample: err = %v", err)
	}
	if _, err := AtBudget(in[:1], 200); err != nil {
		t.Errorf("upwards with only finished samples: %v", err)
	}
}

// TestAtBudgetEqualsGeneratingAtBudget checks the documented equivalence on
// the simulator, whose draws do not depend on the budget: samples generated
// once at 16k and cut to b equal samples generated at b with the same seed.
func TestAtBudgetEqualsGeneratingAtBudget(t *testing.T) {
	cfg := DefaultSimConfig()
	big, err := Simulate(cfg, rand.New(rand.NewPCG(9, 9)))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []int{1024, 4096, 8192, 16384} {
		cfg.Budget = b
		direct, err := Simulate(cfg, rand.New(rand.NewPCG(9, 9)))
		if err != nil {
			t.Fatal(err)
		}
		derived, err := AtBudget(big, b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(derived, direct) {
			t.Errorf("budget %d: derived samples differ from samples generated at that budget", b)
		}
	}
}

func TestBudgetTableShape(t *testing.T) {
	s, err := Simulate(DefaultSimConfig(), rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := BudgetTable(s, []int{4096, 8192, 16384}, 16, 200, rand.New(rand.NewPCG(2, 2)))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		if r.AvgAtKCI.Lo > r.AvgAtK || r.AvgAtKCI.Hi < r.AvgAtK {
			t.Errorf("budget %d: avg@16 %g outside its interval %v", r.Budget, r.AvgAtK, r.AvgAtKCI)
		}
		if i > 0 && (r.TruncationRate > rows[i-1].TruncationRate || r.AvgAtK < rows[i-1].AvgAtK) {
			t.Errorf("budget %d: truncation rose or avg@16 fell with a larger budget", r.Budget)
		}
	}
	if rows[0].Model != SimulatedModel {
		t.Errorf("simulated samples carry model %q", rows[0].Model)
	}
}

func closeAll(a, b []float64, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > tol {
			return false
		}
	}
	return true
}

// TestBudgetTablesSplitsRuns derives budgets 20 and 100 for two runs worked by hand:
// model m has one problem with lengths 10 (correct), 30 (correct), 50 (wrong) and
// 100 (cut at its budget 100); model a has one problem with lengths 10 and 60, both correct.
func TestBudgetTablesSplitsRuns(t *testing.T) {
	samples := []Sample{sample("p", 0, 10, FinishStop, 1), sample("p", 1, 30, FinishStop, 1),
		sample("p", 2, 50, FinishStop, 0), sample("p", 3, 100, FinishLength, 0)}
	for i, tokens := range []int{10, 60} {
		s := sample("q", i, tokens, FinishStop, 1)
		s.Model = "a"
		samples = append(samples, s)
	}
	tables, err := BudgetTables(samples, []int{20, 100}, 0, 10, rand.New(rand.NewPCG(1, 0)))
	if err != nil {
		t.Fatal(err)
	}
	// model, k, then avg, truncation, mean length at budgets 20 and 100; runs sorted by model
	type row struct {
		model string
		k     int
		vals  [3]float64
	}
	want := [][]row{
		{{"a", 2, [3]float64{0.5, 0.5, 15}}, {"a", 2, [3]float64{1, 0, 35}}},
		{{"m", 4, [3]float64{0.25, 0.75, 17.5}}, {"m", 4, [3]float64{0.5, 0.25, 47.5}}},
	}
	if len(tables) != len(want) {
		t.Fatalf("got %d tables, want %d", len(tables), len(want))
	}
	for i := range want {
		for j, w := range want[i] {
			r := tables[i][j]
			got := row{r.Model, r.K, [3]float64{r.AvgAtK, r.TruncationRate, r.MeanLength}}
			if got.model != w.model || got.k != w.k || !closeAll(got.vals[:], w.vals[:], 1e-12) {
				t.Errorf("table %d, budget %d: %+v, want %+v", i, r.Budget, got, w)
			}
		}
	}
	var b strings.Builder
	if err := WriteBudgetTables(&b, tables); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "model a, scorer math, 1 problems, k=2\n") || !strings.Contains(b.String(), "\n\nmodel m, scorer math, 1 problems, k=4\n") {
		t.Errorf("tables:\n%s", b.String())
	}
	_, err = BudgetTables(samples, []int{200}, 0, 10, rand.New(rand.NewPCG(1, 0)))
	if err == nil || !strings.Contains(err.Error(), "model m, scorer math, budget 100") || !strings.Contains(err.Error(), "cannot derive budget 200") {
		t.Errorf("budget above a cut sample's budget: err = %v", err)
	}
	if _, err := BudgetTables(nil, []int{20}, 0, 10, rand.New(rand.NewPCG(1, 0))); err == nil {
		t.Error("no samples: no error")
	}
}

// TestWriteSamplesKeepsSpecialTokens: eval samples write <|im_end|> and the
// tool tags as they are, as rollout records do (both through jsonl.WriteLine).
func TestWriteSamplesKeepsSpecialTokens(t *testing.T) {
	s := sample("a", 0, 10, FinishStop, 1)
	s.Response = "<tool_call>x</tool_call><|im_end|>"
	var b strings.Builder
	if err := WriteSamples(&b, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"response":"<tool_call>x</tool_call><|im_end|>"`) {
		t.Errorf("WriteSamples wrote %s", b.String())
	}
}
