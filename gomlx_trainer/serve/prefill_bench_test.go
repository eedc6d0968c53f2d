package serve

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
	"github.com/mathrl/mathrl/gomlx_trainer/engine"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/gomlx_trainer/sampler"
)

// rolloutShape is a rollout's prompts and budget: groups prompts of
// promptLen tokens, each sampled samples times.
type rolloutShape struct {
	name                       string
	groups, samples, promptLen int
	maxNew                     int
	stops                      []int
}

// rolloutShapes are the CPU demo's rollout (configs/demo.yaml: 8 prompts
// of its chat template around "Compute a*b.", 31 tokens, 8 samples each,
// up to 160 new tokens, the first turn: a sample stops at <|im_end|>,
// <|endoftext|> or </tool_call>, 258, 256 and 271) and a retool-shaped one
// (2 prompts of 512 tokens, 16 samples each, the retool recipe's sampling
// batch of 32, 64 new tokens without stops).
var rolloutShapes = []rolloutShape{
	{name: "demo", groups: 8, samples: 8, promptLen: 31, maxNew: 160, stops: []int{258, 256, 271}},
	{name: "retool", groups: 2, samples: 16, promptLen: 512, maxNew: 64, stops: []int{}},
}

// prompts are the shape's prompts, each group's samples in a row: the
// demo's chat template around "Compute a*b." (31 tokens), the retool's
// with filler text before the question up to its length.
func (r rolloutShape) prompts() [][]int {
	var out [][]int
	for g := range r.groups {
		q := fmt.Sprintf("Compute %d*%d.", g+1, 9-g)
		pad := r.promptLen - len(chatPrompt(q))
		p := chatPrompt(strings.Repeat("Think it through. ", pad/18+1)[:pad] + q)
		for range r.samples {
			out = append(out, p)
		}
	}
	return out
}

// chatPrompt is the demo's prompt of a user message: its chat template in
// the byte tokenizer (a byte is its own id, <|im_start|> 257, <|im_end|> 258).
func chatPrompt(text string) []int {
	var p []int
	for _, part := range []any{257, "user\n" + text, 258, "\n", 257, "assistant\n"} {
		switch v := part.(type) {
		case int:
			p = append(p, v)
		case string:
			for _, c := range []byte(v) {
				p = append(p, int(c))
			}
		}
	}
	return p
}

// demoPolicy is the CPU demo's policy, configs/demo-base.
func demoPolicy(b *testing.B) (string, *qwen3.Model) {
	dir := filepath.Join("..", "..", "configs", "demo-base")
	m, err := qwen3.Load(dir, dtypes.Float32)
	if err != nil {
		b.Fatal(err)
	}
	return dir, m
}

// rates times sample for each way in turn, b.N times after one untimed
// round (which compiles every graph), and reports each way's tokens/s, the
// second's rate over the first's, and the first's tokens a round.
func rates(b *testing.B, ways []string, sample func(way int) int) {
	for w := range ways {
		sample(w)
	}
	spent := make([]time.Duration, len(ways))
	tokens := make([]int, len(ways))
	b.ResetTimer()
	for range b.N {
		for w := range ways {
			start := time.Now()
			tokens[w] += sample(w)
			spent[w] += time.Since(start)
		}
	}
	b.StopTimer()
	rate := make([]float64, len(ways))
	for w, name := range ways {
		rate[w] = float64(tokens[w]) / spent[w].Seconds()
		b.ReportMetric(rate[w], "tok/s-"+name)
	}
	b.ReportMetric(rate[1]/rate[0], ways[1]+"/"+ways[0])
	b.ReportMetric(float64(tokens[0])/float64(b.N), "tokens/round")
	b.ReportMetric(0, "ns/op") // a round is both ways: the rates say it
}

// BenchmarkSharedPrefill measures rollout tokens/s with every sequence's
// prompt prefilled for it ("each") and with each distinct prompt prefilled
// once ("shared"), alternating in one run, for each rolloutShape on the
// demo's policy: in process (a sampler session, "each" with
// Options.PrefillEach) and through a mathrl serve worker of 16 rows, each
// sequence its own request as slime sends them ("each": a worker without a
// prompt cache; "shared": one with, so that a group's first request
// prefills the prompt and the others take it from the cache).
//
//	go test ./gomlx_trainer/serve -run '^$' -bench SharedPrefill -benchtime 2x
func BenchmarkSharedPrefill(b *testing.B) {
	for _, shape := range rolloutShapes {
		prompts := shape.prompts()
		if len(prompts[0]) != shape.promptLen {
			b.Fatalf("%s: prompts of %d tokens, want %d", shape.name, len(prompts[0]), shape.promptLen)
		}
		b.Run(shape.name+"/inprocess", func(b *testing.B) {
			_, m := demoPolicy(b)
			smp := sampler.New(backendtest.New(b), m)
			rates(b, []string{"each", "shared"}, func(way int) int {
				res, err := smp.Generate(context.Background(), prompts, sampler.Options{MaxNewTokens: shape.maxNew,
					Temperature: 1, StopIDs: shape.stops, Seed: 1, PrefillEach: way == 0})
				if err != nil {
					b.Fatal(err)
				}
				tokens := 0
				for _, r := range res {
					tokens += len(r.IDs)
				}
				return tokens
			})
		})
		b.Run(shape.name+"/served", func(b *testing.B) {
			dir, m := demoPolicy(b)
			var clients []engine.Engine
			for _, cacheBytes := range []int64{-1, 0} {
				r := startWith(b, Options{ModelPath: dir, MaxBatch: 16, PrefixCacheBytes: cacheBytes}, nil)
				c, err := engine.NewClient(engine.ClientOptions{Protocol: engine.SGLang, URLs: []string{r.url}, Vocab: m.Config.VocabSize})
				if err != nil {
					b.Fatal(err)
				}
				clients = append(clients, c)
			}
			all, budgets := make([]int, len(prompts)), make([]int, len(prompts))
			for i := range all {
				all[i], budgets[i] = i, shape.maxNew
			}
			rates(b, []string{"each", "shared"}, func(way int) int {
				sess, err := clients[way].Start(context.Background(), prompts, engine.Options{MaxNewTokens: shape.maxNew,
					Temperature: 1, StopIDs: shape.stops, Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
				defer sess.Close()
				turns, err := sess.Generate(context.Background(), all, budgets, nil)
				if err != nil {
					b.Fatal(err)
				}
				tokens := 0
				for _, tr := range turns {
					tokens += len(tr.IDs)
				}
				return tokens
			})
		})
	}
}
