package validation

import (
	"sort"
	"testing"
	"time"

	"github.com/mathrl/mathrl/analysis/scorer"
	"github.com/mathrl/mathrl/data"
	"github.com/mathrl/mathrl/internal/testenv"
)

// BenchmarkValidateAllLabels scores the TP and FP constructions (all five
// templates) of all 12,496 MATH train and test labels with each scorer on one
// goroutine. It reports labels/s on one core, the slowest single scorer call,
// and the time relative to a baseline measured in the same run (extracting the
// last box from the same responses). Run with -benchtime 1x.
func BenchmarkValidateAllLabels(b *testing.B) {
	labels := mathLabels(b)
	partners := Partners(labels)
	type item struct {
		response string
		label    scorer.Label
	}
	var items []item
	for i, l := range labels {
		for _, v := range Variants {
			items = append(items, item{Response(v, l), scorer.TextLabel(l)})
			if partners[i] >= 0 {
				items = append(items, item{Response(v, labels[partners[i]]), scorer.TextLabel(l)})
			}
		}
	}
	start := time.Now()
	for _, it := range items {
		scorer.ExtractBoxed(it.response)
	}
	baseline := time.Since(start)
	for _, name := range scorer.Names() {
		b.Run(name, func(b *testing.B) {
			times := make([]time.Duration, len(items))
			for b.Loop() {
				for i, it := range items {
					t0 := time.Now()
					scorer.ScoreLabel(name, it.response, it.label)
					if d := time.Since(t0); d > times[i] {
						times[i] = d
					}
				}
			}
			perPass := b.Elapsed() / time.Duration(b.N)
			b.StopTimer()
			slowest, which := slowestCall(name, items, times, func(it item) (string, scorer.Label) { return it.response, it.label })
			b.ReportMetric(float64(len(labels))/perPass.Seconds(), "labels/s")
			b.ReportMetric(float64(slowest.Microseconds())/1000, "slowest-ms")
			b.ReportMetric(float64(perPass)/float64(baseline), "x-extract-baseline")
			b.Logf("%s: slowest call %v on label %q", name, slowest, which)
		})
	}
}

// mathLabels returns the labels (non-null answers) of MATH train then test,
// 12,496 in all.
func mathLabels(b *testing.B) []string {
	dir := testenv.DataDir(b, "math_test.jsonl")
	var labels []string
	for _, name := range []string{"math_train", "math_test"} {
		rows, err := data.LoadSet(dir, name)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range rows {
			if r.Answer != nil {
				labels = append(labels, *r.Answer)
			}
		}
	}
	return labels
}

// slowestCall re-times the 500 slowest calls of a pass three times each and
// returns the largest of their best times, so that a call delayed by the
// scheduler or the garbage collector does not count as slow.
func slowestCall[T any](name string, items []T, times []time.Duration, get func(T) (string, scorer.Label)) (time.Duration, string) {
	idx := make([]int, len(items))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return times[idx[a]] > times[idx[b]] })
	var worst time.Duration
	var which string
	for _, i := range idx[:min(500, len(idx))] {
		resp, label := get(items[i])
		best := time.Duration(1<<63 - 1)
		for range 3 {
			t0 := time.Now()
			scorer.ScoreLabel(name, resp, label)
			best = min(best, time.Since(t0))
		}
		if best > worst {
			worst, which = best, label.Text
		}
	}
	return worst, which
}
