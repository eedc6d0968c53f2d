package sampler

import (
	"context"
	"encoding/json"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	mlmodel "github.com/gomlx/gomlx/ml/model"

	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/internal/testenv"
)

// tinyModel loads the tiny Hugging Face checkpoint and its reference.json
// (transformers 5.17.0 greedy continuation).
func tinyModel(t *testing.T) (*qwen3.Model, []int, []int) {
	t.Helper()
	dir := testenv.Model(t, "tiny-qwen3-hf")
	m, err := qwen3.Load(dir, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		GreedyPromptLen int     `json:"greedy_prompt_len"`
		GreedyIDs       [][]int `json:"greedy_ids"`
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	ids := ref.GreedyIDs[0]
	return m, ids[:ref.GreedyPromptLen], ids[ref.GreedyPromptLen:]
}

// fullLogits computes logits of every position without a cache (qwen3.Logits).
type fullLogits struct {
	exec *mlmodel.Exec
}

func newFullLogits(b compute.Backend, m *qwen3.Model) *fullLogits {
	e := mlmodel.MustNewExec(b, m.Store, func(ctx *mlmodel.Scope, ids *Node) *Node {
		return qwen3.Logits(ctx, m.Config, ids)
	})
	e.SetMaxCache(-1) // one graph per length: fine for a test
	return &fullLogits{e}
}

// last returns the logits after the whole of ids.
func (f *fullLogits) last(t *testing.T, ids []int) []float32 {
	t.Helper()
	row := make([]int32, len(ids))
	for i, id := range ids {
		row[i] = int32(id)
	}
	out, err := f.exec.Call([][]int32{row})
	if err != nil {
		t.Fatal(err)
	}
	var res []float32
	tensors.MustConstFlatData(out[0], func(flat []float32) {
		v := len(flat) / len(ids)
		res = slices.Clone(flat[(len(ids)-1)*v:])
	})
	return res
}

// greedyNoCache extends ids by n argmax tokens, recomputing everything each time.
func (f *fullLogits) greedyNoCache(t *testing.T, ids []int, n int) []int {
	out := slices.Clone(ids)
	for range n {
		l := f.last(t, out)
		out = append(out, argmax(l))
	}
	return out[len(ids):]
}

func argmax(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}

func logSoftmax(x []float32, temperature float64) []float64 {
	out := make([]float64, len(x))
	mx := math.Inf(-1)
	for i, v := range x {
		out[i] = float64(v) / temperature
		mx = math.Max(mx, out[i])
	}
	sum := 0.0
	for _, v := range out {
		sum += math.Exp(v - mx)
	}
	lse := mx + math.Log(sum)
	for i := range out {
		out[i] -= lse
	}
	return out
}

func TestGreedyWithCacheMatchesTransformers(t *testing.T) {
	m, prompt, want := tinyModel(t)
	b := backendtest.New(t)
	s := New(b, m)
	res, err := s.Generate(context.Background(), [][]int{prompt}, Options{MaxNewTokens: len(want), StopIDs: []int{}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res[0].IDs, want) {
		t.Fatalf("greedy with cache:\n got %v\nwant %v (transformers)", res[0].IDs, want)
	}
	if res[0].Finish != Length {
		t.Errorf("finish %q, want %q", res[0].Finish, Length)
	}
}

// TestBatchedGreedyMatchesNoCache runs prompts of different lengths in one batch
// (short chunks, so prompts take several steps) and compares each with a full
// recompute of that prompt alone.
func TestBatchedGreedyMatchesNoCache(t *testing.T) {
	m, prompt, _ := tinyModel(t)
	b := backendtest.New(t)
	full := newFullLogits(b, m)
	prompts := [][]int{prompt[:3], prompt, {5, 900, 17, 42, 300, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18}, {7}}
	const n = 12
	res, err := New(b, m).Generate(context.Background(), prompts, Options{MaxNewTokens: n, StopIDs: []int{}, MaxChunk: 5})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range prompts {
		want := full.greedyNoCache(t, p, n)
		if !slices.Equal(res[i].IDs, want) {
			t.Errorf("prompt %d: cached %v, recomputed %v", i, res[i].IDs, want)
		}
	}
}

// TestAppendMatchesNoCache stops one sequence on a stop id, appends "tool
// output", continues, and compares with a full recompute of the whole text.
func TestAppendMatchesNoCache(t *testing.T) {
	m, prompt, want := tinyModel(t)
	b := backendtest.New(t)
	full := newFullLogits(b, m)
	// Sequence 0 stops at the first greedy token (from the 3rd on) not seen before.
	k := 2
	for slices.Contains(want[:k], want[k]) {
		k++
	}
	stopID := want[k]
	other := []int{11, 22, 33, 44}
	ss, err := New(b, m).Start([][]int{prompt, other}, Options{MaxNewTokens: 40, StopIDs: []int{stopID}})
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	for ss.Active(0) {
		if _, err := ss.Step(); err != nil {
			t.Fatal(err)
		}
	}
	r := ss.Result(0)
	if r.Finish != Stop || !slices.Equal(r.IDs, want[:k+1]) {
		t.Fatalf("before append: %v %q, want %v stop", r.IDs, r.Finish, want[:k+1])
	}
	tool := []int{500, 501, 502, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21}
	if err := ss.Append(0, tool); err != nil {
		t.Fatal(err)
	}
	if err := ss.Append(0, tool); err == nil {
		t.Error("append to an active sequence: no error")
	}
	if err := ss.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	r = ss.Result(0)
	prefix := append(append(slices.Clone(prompt), want[:k+1]...), tool...)
	cont := r.IDs[k+1+len(tool):]
	// The continuation may stop early on stopID; compare what was generated.
	wantCont := full.greedyNoCache(t, prefix, len(cont))
	if !slices.Equal(cont, wantCont) {
		t.Errorf("after append: %v, recomputed %v", cont, wantCont)
	}
	for j, s := range r.Sampled {
		appended := j >= k+1 && j < k+1+len(tool)
		if s == appended || (appended && r.LogProbs[j] != 0) {
			t.Fatalf("token %d: sampled=%v logprob=%g, appended=%v", j, s, r.LogProbs[j], appended)
		}
	}
	if len(r.IDs) > 40 {
		t.Errorf("%d tokens after the prompt, budget 40", len(r.IDs))
	}
}

// TestAppendInChunks prefills a prompt (all but its last token) in chunks
// of MaxChunk and feeds an appended tool output in chunks of AppendChunk
// (counted in steps), and the tokens that follow equal a full recompute of
// the whole text.
func TestAppendInChunks(t *testing.T) {
	m, prompt, want := tinyModel(t)
	b := backendtest.New(t)
	full := newFullLogits(b, m)
	const maxChunk, appendChunk = 3, 4
	ss, err := New(b, m).Start([][]int{prompt}, Options{MaxNewTokens: 40, StopIDs: []int{want[0]},
		MaxChunk: maxChunk, AppendChunk: appendChunk})
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	wantSteps := (len(prompt) - 1 + maxChunk - 1) / maxChunk
	if ss.prefillSteps != wantSteps || ss.Prefilled() != len(prompt)-1 {
		t.Errorf("prompt of %d tokens prefilled in %d steps, %d tokens; want %d steps (chunks of %d), %d tokens",
			len(prompt), ss.prefillSteps, ss.Prefilled(), wantSteps, maxChunk, len(prompt)-1)
	}
	if steps := stepsToNextToken(t, ss, 0); steps != 1 {
		t.Errorf("the first token sampled after %d steps, want 1", steps)
	}
	tool := []int{500, 501, 502, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21}
	if err := ss.Append(0, tool); err != nil {
		t.Fatal(err)
	}
	fed := 1 + len(tool) // the stop id sampled last, then the tool's output
	wantSteps = (fed + appendChunk - 1) / appendChunk
	if steps := stepsToNextToken(t, ss, 0); steps != wantSteps {
		t.Errorf("%d appended tokens read in %d steps, want %d (chunks of %d)", fed, steps, wantSteps, appendChunk)
	}
	if err := ss.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := ss.Result(0)
	prefix := append(append(slices.Clone(prompt), want[0]), tool...)
	cont := r.IDs[1+len(tool):]
	if wantCont := full.greedyNoCache(t, prefix, len(cont)); !slices.Equal(cont, wantCont) {
		t.Errorf("after a chunked append: %v, recomputed %v", cont, wantCont)
	}
}

// TestAppendChunkDefault: without AppendChunk an appended tool output is fed
// 64 tokens a step (the documented default), whatever MaxChunk is: 70 tokens
// and the stop id before them take two steps, where a prompt of the same
// session is read in one.
func TestAppendChunkDefault(t *testing.T) {
	m, prompt, want := tinyModel(t)
	b := backendtest.New(t)
	tool := make([]int, 70)
	for i := range tool {
		tool[i] = 7 + i
	}
	for _, maxChunk := range []int{0, 200} {
		ss, err := New(b, m).Start([][]int{prompt}, Options{MaxNewTokens: 100, StopIDs: []int{want[0]}, MaxChunk: maxChunk})
		if err != nil {
			t.Fatal(err)
		}
		if steps := stepsToNextToken(t, ss, 0); steps != 1 {
			t.Errorf("max chunk %d: prompt of %d tokens read in %d steps, want 1", maxChunk, len(prompt), steps)
		}
		if err := ss.Append(0, tool); err != nil {
			t.Fatal(err)
		}
		if steps := stepsToNextToken(t, ss, 0); steps != 2 {
			t.Errorf("max chunk %d: %d appended tokens read in %d steps, want 2 (chunks of 64)", maxChunk, 1+len(tool), steps)
		}
		ss.Close()
	}
}

// stepsToNextToken steps ss until sequence i has sampled one more token and
// returns how many steps that took.
func stepsToNextToken(t *testing.T, ss *Session, i int) int {
	t.Helper()
	before := len(ss.Result(i).IDs)
	for steps := 1; ; steps++ {
		if _, err := ss.Step(); err != nil {
			t.Fatal(err)
		}
		r := ss.Result(i)
		if len(r.IDs) > before && r.Sampled[len(r.IDs)-1] {
			return steps
		}
		if steps > 100 {
			t.Fatalf("sequence %d sampled nothing in %d steps", i, steps)
		}
	}
}

// TestGrowingCacheMatchesFullCache runs prompts whose cache grows from 64 to
// 128, 256 and 512 slots of a capacity of 1024: greedy tokens equal a full
// recompute, and sampled tokens and log-probs equal those of a cache allocated
// at full capacity from the start.
func TestGrowingCacheMatchesFullCache(t *testing.T) {
	m, prompt, _ := tinyModel(t)
	b := backendtest.New(t)
	long := func(n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = prompt[i%len(prompt)] + i%7
		}
		return out
	}
	prompts := [][]int{long(50), long(100), prompt[:4]}
	const n = 40
	s := New(b, m)
	greedy, err := s.Generate(context.Background(), prompts, Options{MaxNewTokens: n, StopIDs: []int{}, Capacity: 1024, MaxChunk: 48})
	if err != nil {
		t.Fatal(err)
	}
	full := newFullLogits(b, m)
	for i, p := range prompts {
		if want := full.greedyNoCache(t, p, n); !slices.Equal(greedy[i].IDs, want) {
			t.Errorf("greedy, prompt %d: growing cache %v, recomputed %v", i, greedy[i].IDs, want)
		}
	}
	opts := Options{MaxNewTokens: 4 * n, Temperature: 0.9, TopP: 0.95, Seed: 7, StopIDs: []int{}, Capacity: 1024}
	growing, err := s.Generate(context.Background(), prompts, opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.FullCache = true
	fixed, err := s.Generate(context.Background(), prompts, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range prompts {
		if len(growing[i].IDs) != 4*n || !slices.Equal(growing[i].IDs, fixed[i].IDs) {
			t.Fatalf("sampled, prompt %d: growing cache %v, full cache %v", i, growing[i].IDs, fixed[i].IDs)
		}
		for j, lp := range growing[i].LogProbs {
			if d := math.Abs(float64(lp - fixed[i].LogProbs[j])); d > 1e-5 {
				t.Errorf("prompt %d token %d: log-prob %g with a growing cache, %g with a full one", i, j, lp, fixed[i].LogProbs[j])
			}
		}
	}
}

func TestCacheBucket(t *testing.T) {
	for _, c := range []struct{ n, capacity, want int }{
		{1, 1024, 64}, {64, 1024, 64}, {65, 1024, 128}, {200, 1024, 256}, {257, 1024, 512},
		{513, 1024, 1024}, {1000, 1024, 1024}, {100, 64, 64}, {300, 300, 300}, {2049, 20000, 4096},
		{6000, 20000, 6144}, {8193, 8704, 8704},
	} {
		if got := CacheBucket(c.n, c.capacity); got != c.want {
			t.Errorf("CacheBucket(%d, %d) = %d, want %d", c.n, c.capacity, got, c.want)
		}
	}
}

func TestSamplingReproducibleAndLogProbs(t *testing.T) {
	m, prompt, _ := tinyModel(t)
	b := backendtest.New(t)
	s := New(b, m)
	prompts := [][]int{prompt, prompt[:5]}
	opts := Options{MaxNewTokens: 10, Temperature: 0.7, Seed: 42, StopIDs: []int{}}
	a, err := s.Generate(context.Background(), prompts, opts)
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.Generate(context.Background(), prompts, opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.Seed = 43
	other, err := s.Generate(context.Background(), prompts, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range prompts {
		if !slices.Equal(a[i].IDs, again[i].IDs) || !slices.Equal(a[i].LogProbs, again[i].LogProbs) {
			t.Errorf("seed 42 twice, prompt %d: %v then %v", i, a[i].IDs, again[i].IDs)
		}
	}
	if slices.Equal(a[0].IDs, other[0].IDs) && slices.Equal(a[1].IDs, other[1].IDs) {
		t.Errorf("seeds 42 and 43 gave the same samples %v", a[0].IDs)
	}
	// Log-probs: log_softmax(logits/T) of the sampled token, from a full recompute.
	full := newFullLogits(b, m)
	for i, p := range prompts {
		ctx := slices.Clone(p)
		for j, id := range a[i].IDs {
			want := logSoftmax(full.last(t, ctx), 0.7)[id]
			if d := math.Abs(float64(a[i].LogProbs[j]) - want); d > 1e-4*(1+math.Abs(want)) {
				t.Errorf("prompt %d token %d: logprob %g, recomputed %g", i, j, a[i].LogProbs[j], want)
			}
			ctx = append(ctx, id)
		}
	}
}

func TestTopKOneAndTinyTopPAreGreedy(t *testing.T) {
	m, prompt, want := tinyModel(t)
	b := backendtest.New(t)
	s := New(b, m)
	for _, opts := range []Options{
		{MaxNewTokens: 12, Temperature: 1, TopK: 1, Seed: 1, StopIDs: []int{}},
		{MaxNewTokens: 12, Temperature: 1.5, TopP: 1e-6, Seed: 2, StopIDs: []int{}},
	} {
		res, err := s.Generate(context.Background(), [][]int{prompt}, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res[0].IDs, want[:12]) {
			t.Errorf("top-k %d top-p %g: %v, greedy %v", opts.TopK, opts.TopP, res[0].IDs, want[:12])
		}
	}
}

// TestTopKTopPKeepOnlyAllowedTokens samples with a high temperature and checks
// every token against the allowed set computed on the host from full logits.
func TestTopKTopPKeepOnlyAllowedTokens(t *testing.T) {
	m, prompt, _ := tinyModel(t)
	b := backendtest.New(t)
	full := newFullLogits(b, m)
	const temp = 3.0
	for _, opts := range []Options{
		{MaxNewTokens: 8, Temperature: temp, TopK: 3, Seed: 7, StopIDs: []int{}},
		{MaxNewTokens: 8, Temperature: temp, TopP: 0.05, Seed: 8, StopIDs: []int{}},
		{MaxNewTokens: 8, Temperature: temp, TopK: 20, TopP: 0.3, Seed: 9, StopIDs: []int{}},
	} {
		res, err := New(b, m).Generate(context.Background(), [][]int{prompt, prompt[:4]}, opts)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range [][]int{prompt, prompt[:4]} {
			ctx := slices.Clone(p)
			for _, id := range res[i].IDs {
				allowed := allowedTokens(full.last(t, ctx), temp, opts.TopK, opts.TopP)
				if !allowed[id] {
					t.Fatalf("top-k %d top-p %g: sampled %d, allowed %v", opts.TopK, opts.TopP, id, allowed)
				}
				ctx = append(ctx, id)
			}
		}
	}
}

// allowedTokens is the reference top-k then top-p filter, by sorting.
func allowedTokens(logits []float32, temp float64, k int, p float64) map[int]bool {
	lp := logSoftmax(logits, temp)
	order := make([]int, len(lp))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if lp[a] > lp[b] {
			return -1
		}
		if lp[a] < lp[b] {
			return 1
		}
		return 0
	})
	if k > 0 {
		order = order[:k]
	}
	if p > 0 && p < 1 {
		norm := 0.0
		for _, i := range order {
			norm += math.Exp(lp[i])
		}
		mass := 0.0
		for n, i := range order {
			mass += math.Exp(lp[i]) / norm
			if mass >= p {
				order = order[:n+1]
				break
			}
		}
	}
	out := map[int]bool{}
	for _, i := range order {
		out[i] = true
	}
	return out
}

func TestStopAndBadInput(t *testing.T) {
	m, prompt, want := tinyModel(t)
	b := backendtest.New(t)
	s := New(b, m)
	res, err := s.Generate(context.Background(), [][]int{prompt}, Options{MaxNewTokens: 20, StopIDs: []int{want[0]}})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Finish != Stop || !slices.Equal(res[0].IDs, want[:1]) {
		t.Errorf("stop on first token: %v %q", res[0].IDs, res[0].Finish)
	}
	for name, c := range map[string]struct {
		prompts [][]int
		opts    Options
	}{
		"empty prompt":   {[][]int{{}}, Options{}},
		"id too large":   {[][]int{{1, 5000}}, Options{}},
		"negative temp":  {[][]int{{1}}, Options{Temperature: -1}},
		"top-p above 1":  {[][]int{{1}}, Options{TopP: 1.5}},
		"prompt too big": {[][]int{make([]int, 70)}, Options{Capacity: 64}},
		"append chunk":   {[][]int{{1}}, Options{AppendChunk: -1}},
	} {
		if _, err := s.Start(c.prompts, c.opts); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	ss, err := s.Start([][]int{{1, 2}}, Options{MaxNewTokens: 2})
	if err != nil {
		t.Fatal(err)
	}
	ss.Close()
	if _, err := ss.Step(); err == nil {
		t.Error("step after close: no error")
	}
}

// TestKeptSetAtTemperature compares the exact set of tokens that top-p (and
// top-k then top-p) keep at temperatures other than 1 with the sort-based
// reference, on rows whose set at temperature 1 differs, so that a filter
// that ignores the temperature fails.
func TestKeptSetAtTemperature(t *testing.T) {
	b := backendtest.New(t)
	const rows, vocab = 4, 40
	rng := rand.New(rand.NewPCG(11, 12))
	logits := make([][]float32, rows)
	for i := range logits {
		logits[i] = make([]float32, vocab)
		for j := range logits[i] {
			logits[i][j] = float32(rng.NormFloat64() * 2)
		}
	}
	for _, c := range []struct {
		temp float64
		k    int
		p    float64
	}{
		{0.5, 0, 0.9}, {2.5, 0, 0.5}, {0.7, 0, 0.3}, {2, 10, 0.6},
	} {
		m := mode{topK: c.k > 0, topP: true}
		got := MustExecOnce(b, func(l, temp, k, p *Node) *Node {
			return ConvertDType(kept(m, l, temp, k, p), dtypes.Int32)
		}, logits, float32(c.temp), int32(c.k), float32(c.p)).Value().([][]int32)
		differs := false
		for i, row := range logits {
			want := allowedTokens(row, c.temp, c.k, c.p)
			differs = differs || !maps.Equal(want, allowedTokens(row, 1, c.k, c.p))
			for id := range vocab {
				if (got[i][id] == 1) != want[id] {
					t.Errorf("temperature %g, top-k %d, top-p %g, row %d: token %d kept %v, want %v (reference set %v)",
						c.temp, c.k, c.p, i, id, got[i][id] == 1, want[id], want)
				}
			}
		}
		if !differs {
			t.Errorf("temperature %g, top-p %g: every row keeps the same set at temperature 1; the case tests nothing", c.temp, c.p)
		}
	}
}

// TestStopAtMaxNewTokens samples greedily a stop token as the last token the
// budget allows: the sequence ends on the stop ("stop"), not on the budget
// ("length"), and keeps the stop token.
func TestStopAtMaxNewTokens(t *testing.T) {
	m, prompt, want := tinyModel(t)
	n := 0
	for i := len(want); i >= 2 && n == 0; i-- {
		if !slices.Contains(want[:i-1], want[i-1]) {
			n = i
		}
	}
	if n == 0 {
		t.Fatalf("no greedy token of %v is new at its place", want)
	}
	res, err := New(backendtest.New(t), m).Generate(context.Background(), [][]int{prompt},
		Options{MaxNewTokens: n, StopIDs: []int{want[n-1]}})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Finish != Stop || !slices.Equal(res[0].IDs, want[:n]) {
		t.Errorf("stop id %d as token %d of max_new_tokens %d: %v %q, want %v %q", want[n-1], n, n, res[0].IDs, res[0].Finish, want[:n], Stop)
	}
}

// TestDrawsFollowSoftmax picks from fixed logits with 20,000 keys: the
// frequency of each token is within 4.5 standard deviations of its
// softmax(logits/T) probability, computed here in float64 (the keys are
// fixed, so the test is deterministic).
func TestDrawsFollowSoftmax(t *testing.T) {
	b := backendtest.New(t)
	const n, temp = 20000, 0.8
	row := []float32{1.5, -0.3, 0.7, 2.1, -2, 0}
	logits := make([][]float32, n)
	keys := make([]uint32, n)
	for i := range logits {
		logits[i], keys[i] = row, DrawKey(99, i)
	}
	got := MustExecOnce(b, func(l, temp, key *Node) *Node {
		ids, _ := pick(mode{}, l, temp, nil, nil, key)
		return ids
	}, logits, float32(temp), keys).Value().([]int32)
	counts := make([]int, len(row))
	for _, id := range got {
		counts[id]++
	}
	for id, lp := range logSoftmax(row, temp) {
		p := math.Exp(lp)
		sd := math.Sqrt(n * p * (1 - p))
		if d := math.Abs(float64(counts[id]) - n*p); d > 4.5*sd {
			t.Errorf("token %d drawn %d times in %d, want %.0f ± %.0f", id, counts[id], n, n*p, 4.5*sd)
		}
	}
}

// TestSequenceDrawsIgnoreTheBatch samples one prompt at one seed alone, beside
// another prompt (its row second), and continued in a fresh session from its
// first tokens (as a server given the sequence so far samples it): the tokens
// are the same. The log-probs agree to float32 rounding only: the backend's
// matmul picks its kernel by size, so a batch of other shapes sums in another
// order. Another seed samples other tokens.
func TestSequenceDrawsIgnoreTheBatch(t *testing.T) {
	m, prompt, _ := tinyModel(t)
	s := New(backendtest.New(t), m)
	ctx := context.Background()
	opts := Options{MaxNewTokens: 12, Temperature: 1, TopP: 0.95, TopK: 40, StopIDs: []int{}}
	run := func(prompts [][]int, seeds []uint64, maxNew int) []Result {
		t.Helper()
		o := opts
		o.Seeds, o.MaxNewTokens = seeds, maxNew
		res, err := s.Generate(ctx, prompts, o)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	same := func(what string, a, b Result) {
		t.Helper()
		if !slices.Equal(a.IDs, b.IDs) {
			t.Errorf("%s: ids %v, want %v", what, b.IDs, a.IDs)
		}
		for j := range min(len(a.LogProbs), len(b.LogProbs)) {
			if d := math.Abs(float64(a.LogProbs[j] - b.LogProbs[j])); d > 1e-5 {
				t.Errorf("%s: token %d log-prob %g, want %g", what, j, b.LogProbs[j], a.LogProbs[j])
			}
		}
	}
	alone := run([][]int{prompt}, []uint64{7}, 12)[0]
	same("beside another prompt", alone, run([][]int{prompt[:3], prompt}, []uint64{8, 7}, 12)[1])
	rest := run([][]int{append(slices.Clone(prompt), alone.IDs[:5]...)}, []uint64{7}, 7)[0]
	same("continued from 5 tokens", Result{IDs: alone.IDs[5:], LogProbs: alone.LogProbs[5:]}, rest)
	if other := run([][]int{prompt}, []uint64{9}, 12)[0]; slices.Equal(other.IDs, alone.IDs) {
		t.Errorf("seeds 7 and 9 sampled the same %v", alone.IDs)
	}
}

// TestSlotsAdmitMidway runs a slot session: sequence A is admitted, B joins
// after A's third step, and once A has finished C takes A's row again. Each
// samples the tokens it samples alone (log-probs to float32 rounding), so a
// late join and a reused row (its cache cleared) change nothing.
func TestSlotsAdmitMidway(t *testing.T) {
	m, prompt, _ := tinyModel(t)
	s := New(backendtest.New(t), m)
	opts := Options{Temperature: 1, TopK: 50, StopIDs: []int{}}
	alone := func(p []int, seed uint64, maxNew int) Result {
		t.Helper()
		o := opts
		o.Seeds, o.MaxNewTokens = []uint64{seed}, maxNew
		res, err := s.Generate(context.Background(), [][]int{p}, o)
		if err != nil {
			t.Fatal(err)
		}
		return res[0]
	}
	o := opts
	o.Capacity = 128
	ss, err := s.StartSlots(2, o)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	step := func() {
		t.Helper()
		if _, err := ss.Step(); err != nil {
			t.Fatal(err)
		}
	}
	a, b, c := prompt, prompt[2:], append(slices.Clone(prompt[:4]), 7, 8, 9)
	if err := ss.Admit(0, a, 1, 5); err != nil {
		t.Fatal(err)
	}
	step()
	step()
	step()
	if err := ss.Admit(1, b, 2, 9); err != nil {
		t.Fatal(err)
	}
	for ss.Active(0) {
		step()
	}
	gotA := ss.Result(0)
	if err := ss.Admit(0, c, 3, 4); err != nil {
		t.Fatal(err)
	}
	if err := ss.Admit(1, c, 3, 4); err == nil {
		t.Error("admitted to a row still generating")
	}
	for ss.Active(0) || ss.Active(1) {
		step()
	}
	for name, pair := range map[string][2]Result{
		"A": {alone(a, 1, 5), gotA}, "B joining late": {alone(b, 2, 9), ss.Result(1)}, "C in A's row": {alone(c, 3, 4), ss.Result(0)},
	} {
		want, got := pair[0], pair[1]
		if !slices.Equal(want.IDs, got.IDs) || len(want.LogProbs) != len(got.LogProbs) {
			t.Errorf("%s: ids %v, alone %v", name, got.IDs, want.IDs)
			continue
		}
		for j := range want.LogProbs {
			if d := math.Abs(float64(want.LogProbs[j] - got.LogProbs[j])); d > 1e-5 {
				t.Errorf("%s: token %d log-prob %g, alone %g", name, j, got.LogProbs[j], want.LogProbs[j])
			}
		}
	}
}

// TestSeedsDifferingInTheHighBits: a sequence seed is 64 bits, and seeds
// that differ in one bit, of the high 32 as of the low, give other draw
// keys at every position, so the same prompt samples other tokens (a
// random tiny model, 12 tokens at temperature 1). Sequence seeds come from
// SplitMix64 and servers get them whole, so the high bits are as random as
// the low.
func TestSeedsDifferingInTheHighBits(t *testing.T) {
	const seed = uint64(0x0123456789abcdef)
	for bit := range 64 {
		other := seed ^ 1<<bit
		for p := range 100 {
			if DrawKey(seed, p) == DrawKey(other, p) {
				t.Fatalf("seeds %#x and %#x (bit %d) have the same draw key at position %d", seed, other, bit, p)
			}
		}
	}
	cfg, err := qwen3.NamedConfig("tiny")
	if err != nil {
		t.Fatal(err)
	}
	m, err := qwen3.NewRandom(cfg, dtypes.Float32, 4)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{MaxNewTokens: 12, Temperature: 1, StopIDs: []int{}, Seeds: []uint64{7, 7 | 1<<32}}
	res, err := New(backendtest.New(t), m).Generate(context.Background(), [][]int{{1, 2, 3}, {1, 2, 3}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(res[0].IDs, res[1].IDs) {
		t.Errorf("seeds 7 and 7 + 2^32 sampled the same %v", res[0].IDs)
	}
}

// TestMeshSessionCountsItsPrompts lays out sessions for a mesh of devices,
// which needs none: the rows are padded with copies of the first prompt to
// a multiple of the devices, those rows inactive, and the session has one
// result per prompt, not per row (the device-free core of grpo's
// TestSamplerOnMeshMatchesOneDevice).
func TestMeshSessionCountsItsPrompts(t *testing.T) {
	cfg, err := qwen3.NamedConfig("tiny")
	if err != nil {
		t.Fatal(err)
	}
	s := New(backendtest.New(t), &qwen3.Model{Config: cfg})
	for _, tc := range []struct{ prompts, devices, rows int }{{6, 4, 8}, {8, 4, 8}, {1, 4, 4}, {6, 1, 6}, {5, 2, 6}} {
		var prompts [][]int
		for i := range tc.prompts {
			prompts = append(prompts, []int{1, 2 + i})
		}
		sess, err := s.newSession(prompts, Options{MaxNewTokens: 4, Seed: 3}, 64, nil, tc.devices)
		if err != nil {
			t.Fatal(err)
		}
		if len(sess.active) != tc.rows || sess.Len() != tc.prompts || len(sess.Results()) != tc.prompts {
			t.Errorf("%d prompts on %d devices: %d rows, Len %d, %d results; want %d rows, %d and %d",
				tc.prompts, tc.devices, len(sess.active), sess.Len(), len(sess.Results()), tc.rows, tc.prompts, tc.prompts)
			continue
		}
		for i, active := range sess.active {
			if active != (i < tc.prompts) || i >= tc.prompts && len(sess.pending[i]) != 0 {
				t.Errorf("%d prompts on %d devices: row %d active %v, pending %v", tc.prompts, tc.devices, i, active, sess.pending[i])
			}
		}
	}
}

// groupPrompts is a GRPO-like batch: three prompts of 9, 9 and 21 tokens
// (two of the same length, so a prefix copied into the wrong rows samples
// other tokens) and one of a single token (nothing to prefill), repeated
// and interleaved, 11 rows.
func groupPrompts(prompt []int) [][]int {
	long := slices.Concat(prompt, prompt)[:21]
	a, b := slices.Clone(prompt[:9]), slices.Clone(prompt[1:10])
	return [][]int{a, b, a, long, a, {7}, b, long, a, {7}, long}
}

// TestSharedPrefillIsBitExact samples a GRPO-like batch (groupPrompts, the
// prompts prefilled in chunks of 8, the cache growing past the prompts'
// slots, top-p and top-k at temperature 1) with each distinct prompt
// prefilled once and copied into its rows, and with every row prefilled for
// itself (PrefillEach): the same tokens and log-probs, bit for bit, and the
// shared session prefills each prompt once. In float32 and in bfloat16 (the
// checkpoint is stored in bfloat16, so both read the same weights); the
// bfloat16 samples, taken at the same draws, then agree with float32's on
// the first token of each row to bfloat16 rounding.
func TestSharedPrefillIsBitExact(t *testing.T) {
	dir := testenv.Model(t, "tiny-qwen3-hf")
	_, prompt, _ := tinyModel(t)
	b := backendtest.New(t)
	prompts := groupPrompts(prompt)
	distinct := 8 + 8 + 20 // tokens prefilled once per distinct prompt, all but the last
	each := 0
	for _, p := range prompts {
		each += len(p) - 1
	}
	opts := Options{MaxNewTokens: 60, Temperature: 1, TopP: 0.95, TopK: 200, Seed: 5, StopIDs: []int{}, MaxChunk: 8}
	first := map[dtypes.DType][]Result{}
	for _, dtype := range []dtypes.DType{dtypes.Float32, dtypes.BFloat16} {
		m, err := qwen3.Load(dir, dtype)
		if err != nil {
			t.Fatal(err)
		}
		s := New(b, m)
		run := func(o Options, prefilled int) []Result {
			t.Helper()
			ss, err := s.Start(prompts, o)
			if err != nil {
				t.Fatal(err)
			}
			defer ss.Close()
			if ss.Prefilled() != prefilled {
				t.Errorf("%s, prefill each %v: %d prompt tokens prefilled, want %d", dtype, o.PrefillEach, ss.Prefilled(), prefilled)
			}
			if err := ss.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			return ss.Results()
		}
		shared := run(opts, distinct)
		o := opts
		o.PrefillEach = true
		unshared := run(o, each)
		for i := range prompts {
			if !sameBits(shared[i], unshared[i]) {
				t.Errorf("%s, row %d: shared prefill %v %v, each its own %v %v", dtype, i,
					shared[i].IDs, shared[i].LogProbs, unshared[i].IDs, unshared[i].LogProbs)
			}
		}
		first[dtype] = shared
	}
	worst := 0.0
	for i := range prompts {
		f, h := first[dtypes.Float32][i], first[dtypes.BFloat16][i]
		if f.IDs[0] != h.IDs[0] {
			t.Errorf("row %d: first token %d in float32, %d in bfloat16", i, f.IDs[0], h.IDs[0])
			continue
		}
		worst = max(worst, math.Abs(float64(f.LogProbs[0]-h.LogProbs[0])))
	}
	t.Logf("first tokens' log-probs, bfloat16 against float32: within %.3g", worst)
	if worst > 0.05 {
		t.Errorf("first tokens' log-probs differ by up to %.3g between bfloat16 and float32, want at most 0.05", worst)
	}
}

// sameBits reports whether a and b hold the same tokens, log-probs bit for
// bit, sampled flags and finish.
func sameBits(a, b Result) bool {
	bits := func(lp []float32) []uint32 {
		out := make([]uint32, len(lp))
		for k, v := range lp {
			out[k] = math.Float32bits(v)
		}
		return out
	}
	return slices.Equal(a.IDs, b.IDs) && slices.Equal(bits(a.LogProbs), bits(b.LogProbs)) &&
		slices.Equal(a.Sampled, b.Sampled) && a.Finish == b.Finish
}

// TestPrefixCacheAcrossSessions keeps prompts' prefills in a PrefixCache of
// room for two (a prefix of the tiny model at 64 slots: a key and a value
// tensor [1, 2, 64, 16] of float32 per layer, 32 KiB): a later session, a
// slot session's Admit, takes a prompt's prefix from it and samples what
// prefilling anew samples, bit for bit; the least recently used prefix goes
// first; a prefix of other weights or another MaxChunk is not taken; Flush
// empties it, and a cache smaller than one prefix keeps none.
func TestPrefixCacheAcrossSessions(t *testing.T) {
	m, prompt, _ := tinyModel(t)
	b := backendtest.New(t)
	s := New(b, m)
	cfg := m.Config
	one := int64(2*cfg.Layers) * int64(cfg.KVHeads*64*cfg.HeadDim) * 4
	c := NewPrefixCache(2 * one)
	a, bb, cc := prompt[:9], prompt[1:10], prompt[2:12]
	opts := Options{MaxNewTokens: 12, Temperature: 1, Seed: 3, StopIDs: []int{}, Prefixes: c}
	session := func(smp *Sampler, o Options, prompts ...[]int) ([]Result, []int) {
		t.Helper()
		ss, err := smp.Start(prompts, o)
		if err != nil {
			t.Fatal(err)
		}
		defer ss.Close()
		if err := ss.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		shared := make([]int, len(prompts))
		for i := range shared {
			shared[i] = ss.SharedPrefix(i)
		}
		return ss.Results(), shared
	}
	want := func(st PrefixCacheStats, entries int, hits, misses int64) {
		t.Helper()
		if st.Entries != entries || st.Bytes != int64(entries)*one || st.MaxBytes != 2*one || st.Hits != hits || st.Misses != misses {
			t.Errorf("stats %+v, want %d entries of %d bytes, %d hits, %d misses", st, entries, one, hits, misses)
		}
	}
	if _, shared := session(s, opts, a, a, bb); !slices.Equal(shared, []int{0, 8, 0}) {
		t.Errorf("first session: shared prefixes %v, want [0 8 0]", shared)
	}
	want(c.Stats(), 2, 0, 2)
	got, shared := session(s, opts, a, cc) // a hit; cc drops bb, the least recently used
	if !slices.Equal(shared, []int{8, 0}) {
		t.Errorf("second session: shared prefixes %v, want [8 0]", shared)
	}
	want(c.Stats(), 2, 1, 3)
	fresh := opts
	fresh.Prefixes, fresh.PrefillEach = nil, true
	if anew, _ := session(s, fresh, a, cc); !sameBits(got[0], anew[0]) || !sameBits(got[1], anew[1]) {
		t.Errorf("from the cache %v, prefilled anew %v", got, anew)
	}
	session(s, opts, bb) // dropped: a miss
	want(c.Stats(), 2, 1, 4)

	admitted := func(prefixes *PrefixCache) (Result, int) {
		t.Helper()
		slots, err := s.StartSlots(2, Options{Temperature: 1, StopIDs: []int{}, Capacity: 64, Prefixes: prefixes})
		if err != nil {
			t.Fatal(err)
		}
		defer slots.Close()
		if err := slots.Admit(1, bb, 9, 12); err != nil {
			t.Fatal(err)
		}
		if err := slots.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		return slots.Result(1), slots.SharedPrefix(1)
	}
	cached, n := admitted(c)
	if n != 8 {
		t.Errorf("admitted a cached prompt: %d tokens shared, want 8", n)
	}
	if anew, _ := admitted(nil); !sameBits(cached, anew) {
		t.Errorf("admitted from the cache %v, prefilled anew %v", cached, anew)
	}
	want(c.Stats(), 2, 2, 4)

	other := opts
	other.MaxChunk = 4
	session(s, other, bb)
	want(c.Stats(), 2, 2, 5)
	m2, err := qwen3.Load(testenv.Model(t, "tiny-qwen3-hf"), dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	session(New(b, m2), opts, bb)
	want(c.Stats(), 2, 2, 6)
	c.Flush()
	want(c.Stats(), 0, 2, 6)

	small := NewPrefixCache(one - 1)
	opts.Prefixes = small
	session(s, opts, a)
	if st := small.Stats(); st.Entries != 0 || st.Bytes != 0 || st.Misses != 1 {
		t.Errorf("a cache smaller than a prefix: %+v, want it empty after a miss", st)
	}
}
