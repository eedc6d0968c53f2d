package qwen3

import (
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
)

// TestExtendMatchesLogits feeds two sequences to Extend in chunks of uneven
// lengths (a prefill, chunks with padding, a row left alone with lens 0,
// single tokens) into one cache, and compares each call's logits at each
// row's last real token with Logits over the whole sequence at that position.
func TestExtendMatchesLogits(t *testing.T) {
	dir := t.TempDir()
	if err := WriteRandom(wideHeads, dir, "F32", 17); err != nil {
		t.Fatal(err)
	}
	m, err := Load(dir, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	ids := [][]int32{{1, 5, 9, 2, 7, 3, 30, 12, 8}, {4, 4, 11, 0, 6, 21, 13, 2, 9}}
	lens := [][2]int{{4, 2}, {1, 5}, {0, 1}, {4, 1}} // tokens of each row per call: 9 each in all
	b := backendtest.New(t)
	want := logitsOf(t, b, m, ids)
	exec := model.MustNewExec(b, m.Store, func(scope *model.Scope, start *Node) []*Node {
		g := start.Graph()
		var cache []*Node
		for _, sh := range m.Config.CacheShapes(len(ids), 16, m.DType) {
			cache = append(cache, Zeros(g, sh))
		}
		var out []*Node
		done := [2]int{}
		for _, l := range lens {
			width := max(l[0], l[1])
			tokens := make([][]int32, len(ids))
			for r := range ids {
				tokens[r] = make([]int32, width)
				copy(tokens[r], ids[r][done[r]:done[r]+l[r]])
			}
			var logits *Node
			logits, cache = Extend(scope, m.Config, Const(g, tokens), Const(g, []int32{int32(done[0]), int32(done[1])}),
				Const(g, []int32{int32(l[0]), int32(l[1])}), cache)
			out = append(out, logits)
			done[0], done[1] = done[0]+l[0], done[1]+l[1]
		}
		return out
	})
	out, err := exec.Call(int32(0))
	if err != nil {
		t.Fatal(err)
	}
	done := [2]int{}
	for k, l := range lens {
		vals, err := Float32s(out[k])
		if err != nil {
			t.Fatal(err)
		}
		vocab := m.Config.VocabSize
		for r := range ids {
			done[r] += l[r]
			if l[r] == 0 {
				continue // the row was left alone: its logits mean nothing
			}
			got := make([]float64, vocab)
			for v := range got {
				got[v] = float64(vals[r*vocab+v])
			}
			if e := relErr(got, want[r][done[r]-1]); e > 1e-5 {
				t.Errorf("call %d, row %d, position %d: Extend's logits differ from Logits' by %.2e of the row's largest", k, r, done[r]-1, e)
			}
		}
	}
}
