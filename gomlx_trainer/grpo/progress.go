package grpo

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// progress writes the trainer's terminal output: log lines, a progress bar
// line per rollout, and now and then one sample to look at.
type progress struct {
	w       io.Writer
	samples int
}

func newProgress(w io.Writer) *progress {
	if w == nil {
		w = io.Discard
	}
	return &progress{w: w}
}

// Printf writes one log line.
func (p *progress) Printf(format string, args ...any) {
	fmt.Fprintf(p.w, "mathrl: "+format+"\n", args...)
}

// Bar writes "[#####.....] done/total elapsed ETA what".
func (p *progress) Bar(done, total int, elapsed time.Duration, what string) {
	const width = 20
	filled := width * done / max(total, 1)
	eta := time.Duration(0)
	if done > 0 {
		eta = elapsed / time.Duration(done) * time.Duration(total-done)
	}
	fmt.Fprintf(p.w, "[%s%s] %d/%d %s (eta %s)  %s\n", strings.Repeat("#", filled), strings.Repeat(".", width-filled),
		done, total, elapsed.Round(time.Second), eta.Round(time.Second), what)
}

// Sample shows one prompt and response every few rollouts.
func (p *progress) Sample(prompt, response string, reward float64) {
	p.samples++
	if p.samples%10 != 1 {
		return
	}
	fmt.Fprintf(p.w, "  sample: %q -> %q (reward %+.2f)\n", prompt, clip(response, 300), reward)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n/2] + " ... " + s[len(s)-n/2:]
}
