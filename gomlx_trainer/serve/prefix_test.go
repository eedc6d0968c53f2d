package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
	"github.com/mathrl/mathrl/gomlx_trainer/engine"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/gomlx_trainer/sampler"
)

// servedPrompt is a prompt of 20 tokens: 19 prefilled, in a cache of 64 slots.
var servedPrompt = []int{256, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29}

// idsJSON writes ids as a JSON list.
func idsJSON(ids []int) string {
	out, _ := json.Marshal(ids)
	return string(out)
}

// generated posts a /generate body and reads its answers (a list, or one).
func generated(t *testing.T, url, body string) []engine.SGLangResponse {
	t.Helper()
	code, answer := post(t, url+"/generate", body)
	if code != 200 {
		t.Fatalf("%s: %d %s", body, code, answer)
	}
	var list []engine.SGLangResponse
	if strings.HasPrefix(strings.TrimSpace(answer), "[") {
		if err := json.Unmarshal([]byte(answer), &list); err != nil {
			t.Fatal(err)
		}
		return list
	}
	var one engine.SGLangResponse
	if err := json.Unmarshal([]byte(answer), &one); err != nil {
		t.Fatal(err)
	}
	return []engine.SGLangResponse{one}
}

// served is an SGLang answer as a sampler.Result (finish reason aside).
func served(a engine.SGLangResponse) sampler.Result {
	res := sampler.Result{IDs: a.OutputIDs}
	for _, e := range a.MetaInfo.OutputTokenLogprobs {
		res.LogProbs = append(res.LogProbs, float32(*e.LogProb))
	}
	return res
}

// unshared samples prompts in process on dir's weights, every prompt
// prefilled for itself, at temperature 1 without stop ids.
func unshared(t *testing.T, dir string, prompts [][]int, maxNew int, seed uint64, seeds []uint64) []sampler.Result {
	t.Helper()
	m, err := qwen3.Load(dir, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sampler.New(backendtest.New(t), m).Generate(context.Background(), prompts, sampler.Options{MaxNewTokens: maxNew,
		Temperature: 1, StopIDs: []int{}, Seed: seed, Seeds: seeds, PrefillEach: true})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// sameBits reports whether a and b are the same tokens with the same
// log-probs, bit for bit.
func sameBits(a, b sampler.Result) bool {
	if !slices.Equal(a.IDs, b.IDs) || len(a.LogProbs) != len(b.LogProbs) {
		return false
	}
	for k := range a.LogProbs {
		if math.Float32bits(a.LogProbs[k]) != math.Float32bits(b.LogProbs[k]) {
			return false
		}
	}
	return true
}

// cacheStats reads /server_info's prefix_cache.
func cacheStats(t *testing.T, url string) sampler.PrefixCacheStats {
	t.Helper()
	_, body := get(t, url+"/server_info")
	var info struct {
		PrefixCache *sampler.PrefixCacheStats `json:"prefix_cache"`
	}
	if err := json.Unmarshal([]byte(body), &info); err != nil || info.PrefixCache == nil {
		t.Fatalf("/server_info: %s, want its prefix_cache", body)
	}
	return *info.PrefixCache
}

// TestServeSharesPrefills sends a prompt for 4 answers (n = 4), then the
// same prompt alone, then a batch holding it twice beside another prompt,
// then the OpenAI API's n = 3: the answers of a request are those of the
// in-process sampler prefilling every sequence for itself, bit for bit
// (answer k of n drawing from the seed's k-th sequence seed); the prompt is
// prefilled once, by the first request, and taken from the prompt cache by
// the others, as cached_tokens (19 of 20) and /server_info's hits and misses
// say. The single request runs in the slot batch, whose shapes are not the
// in-process sampler's: it is compared with the same request to a server
// without a prompt cache.
func TestServeSharesPrefills(t *testing.T) {
	dir := tinyDir(t, 1)
	r := start(t, dir, 4, nil)
	p, other := servedPrompt, []int{256, 3, 1, 4, 1, 5, 9, 2, 6}
	const params = `"max_new_tokens": 10, "ignore_eos": true`
	want := func(what string, got []engine.SGLangResponse, ref []sampler.Result, cached []int) {
		t.Helper()
		if len(got) != len(ref) {
			t.Fatalf("%s: %d answers, want %d", what, len(got), len(ref))
		}
		for k := range got {
			if !sameBits(served(got[k]), ref[k]) {
				t.Errorf("%s, answer %d: %v %v, unshared in process %v %v", what, k, got[k].OutputIDs,
					served(got[k]).LogProbs, ref[k].IDs, ref[k].LogProbs)
			}
			if got[k].MetaInfo.CachedTokens != cached[k] {
				t.Errorf("%s, answer %d: cached_tokens %d, want %d", what, k, got[k].MetaInfo.CachedTokens, cached[k])
			}
		}
	}
	group := generated(t, r.url, `{"input_ids": `+idsJSON(p)+`, "return_logprob": true, "sampling_params": {`+params+`, "n": 4, "sampling_seed": 5}}`)
	want("n = 4", group, unshared(t, dir, [][]int{p, p, p, p}, 10, 5, nil), []int{0, 19, 19, 19})
	if st := cacheStats(t, r.url); st.Entries != 1 || st.Hits != 0 || st.Misses != 1 || st.Bytes <= 0 || st.MaxBytes != DefaultPrefixCacheBytes {
		t.Errorf("after the first request: prefix cache %+v, want 1 entry, 0 hits, 1 miss, at most %d bytes", st, DefaultPrefixCacheBytes)
	}

	single := `{"input_ids": ` + idsJSON(p) + `, "return_logprob": true, "sampling_params": {` + params + `, "sampling_seed": 8}}`
	nocache := startWith(t, Options{ModelPath: dir, MaxBatch: 4, PrefixCacheBytes: -1}, nil)
	want("alone", generated(t, r.url, single), []sampler.Result{served(generated(t, nocache.url, single)[0])}, []int{19})

	batch := fmt.Sprintf(`{"input_ids": [%s, %s, %s], "return_logprob": true, "sampling_params": [{%s, "sampling_seed": 1}, {%s, "sampling_seed": 2}, {%s, "sampling_seed": 3}]}`,
		idsJSON(p), idsJSON(other), idsJSON(p), params, params, params)
	want("a batch", generated(t, r.url, batch), unshared(t, dir, [][]int{p, other, p}, 10, 0, []uint64{1, 2, 3}), []int{19, 0, 19})

	code, body := post(t, r.url+"/v1/completions", `{"prompt": `+idsJSON(p)+`, "max_tokens": 10, "ignore_eos": true, "n": 3, "seed": 6, "logprobs": 0, "return_token_ids": true}`)
	var oai engine.OpenAIResponse
	if err := json.Unmarshal([]byte(body), &oai); code != 200 || err != nil || len(oai.Choices) != 3 {
		t.Fatalf("completions, n = 3: %d %s", code, body)
	}
	for k, ref := range unshared(t, dir, [][]int{p, p, p}, 10, 6, nil) {
		ch := oai.Choices[k]
		got := sampler.Result{IDs: ch.TokenIDs}
		for _, lp := range ch.Logprobs.TokenLogprobs {
			got.LogProbs = append(got.LogProbs, float32(*lp))
		}
		if ch.Index != k || !sameBits(got, ref) {
			t.Errorf("completions, choice %d (index %d): %v, unshared in process %v", k, ch.Index, got.IDs, ref.IDs)
		}
	}
	if st := cacheStats(t, r.url); st.Entries != 2 || st.Hits != 3 || st.Misses != 2 {
		t.Errorf("after four requests: prefix cache %+v, want 2 entries, 3 hits (alone, the batch, completions), 2 misses", st)
	}
}

// TestServeFlushesThePrefixCache: a weights update empties the prompt
// cache, and the prompt sent again is prefilled by the new weights
// (cached_tokens 0), its answers those of the new weights in process, bit
// for bit; /flush_cache empties it too, and a server started without a
// prompt cache reports none.
func TestServeFlushesThePrefixCache(t *testing.T) {
	dir, dir2 := tinyDir(t, 1), tinyDir(t, 2)
	r := start(t, dir, 2, nil)
	req := `{"input_ids": ` + idsJSON(servedPrompt) + `, "return_logprob": true, "sampling_params": {"max_new_tokens": 6, "ignore_eos": true, "n": 2, "sampling_seed": 4}}`
	generated(t, r.url, req)
	if st := cacheStats(t, r.url); st.Entries != 1 {
		t.Fatalf("before the update: prefix cache %+v, want 1 entry", st)
	}
	if code, body := post(t, r.url+"/update_weights_from_disk", `{"model_path": "`+dir2+`", "weight_version": "2"}`); code != 200 {
		t.Fatalf("update: %d %s", code, body)
	}
	if st := cacheStats(t, r.url); st.Entries != 0 || st.Bytes != 0 {
		t.Errorf("after the update: prefix cache %+v, want it empty", st)
	}
	after := generated(t, r.url, req)
	ref := unshared(t, dir2, [][]int{servedPrompt, servedPrompt}, 6, 4, nil)
	old := unshared(t, dir, [][]int{servedPrompt, servedPrompt}, 6, 4, nil)
	for k := range after {
		if !sameBits(served(after[k]), ref[k]) || sameBits(served(after[k]), old[k]) {
			t.Errorf("after the update, answer %d: %v %v; the new weights' %v %v, the old %v", k, after[k].OutputIDs,
				served(after[k]).LogProbs, ref[k].IDs, ref[k].LogProbs, old[k].LogProbs)
		}
		if want := []int{0, 19}[k]; after[k].MetaInfo.CachedTokens != want {
			t.Errorf("after the update, answer %d: cached_tokens %d, want %d", k, after[k].MetaInfo.CachedTokens, want)
		}
	}
	if st := cacheStats(t, r.url); st.Entries != 1 || st.Misses != 2 {
		t.Errorf("after the update and a request: prefix cache %+v, want 1 entry, 2 misses", st)
	}
	if code, body := post(t, r.url+"/flush_cache", ""); code != 200 || !strings.Contains(body, `"success":true`) {
		t.Errorf("/flush_cache: %d %s", code, body)
	}
	if st := cacheStats(t, r.url); st.Entries != 0 || st.Bytes != 0 {
		t.Errorf("after /flush_cache: prefix cache %+v, want it empty", st)
	}
	none := startWith(t, Options{ModelPath: dir, MaxBatch: 2, PrefixCacheBytes: -1}, nil)
	if _, body := get(t, none.url+"/server_info"); !strings.Contains(body, `"prefix_cache":null`) {
		t.Errorf("a server without a prompt cache: /server_info %s, want prefix_cache null", body)
	}
}
