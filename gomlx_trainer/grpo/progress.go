package grpo

import (
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/mathrl/mathrl/gomlx_trainer/toolloop"
)

// progressEvery is how often a long phase (a rollout's sampling, an
// evaluation) reports how far it has got: rarely enough that the CPU demo,
// whose phases take seconds, prints no such line.
const progressEvery = 30 * time.Second

// progress writes the trainer's terminal output: log lines, a progress bar
// line per rollout, a line every progressEvery inside long phases, and now
// and then one sample to look at. Its lines may come from two goroutines
// (async_rollouts), each written whole.
type progress struct {
	w       io.Writer // a lockedWriter
	samples int
	now     func() time.Time // the clock of the phase lines
	every   time.Duration    // time between two lines of a phase
}

func newProgress(w io.Writer) *progress {
	if w == nil {
		w = io.Discard
	}
	return &progress{w: &lockedWriter{w: w}, now: time.Now, every: progressEvery}
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

// phase is one long phase of a run (a rollout's sampling, an evaluation):
// total sequences generated in batches, each at most budget tokens long. As
// the toolloop.Progress of its batches it writes, every p.every,
//
//	mathrl: rollout 3: 40/128 sequences done, 51200 tokens (850/s), 12 tool calls; 1m0s, at most 2m30s left
//
// where the time left is the bound at which every running sequence uses its
// whole budget, at the time per decoding step since the last line (the first
// steps read the prompts, and take longer). It is left out when fewer than
// minEtaSteps steps were taken since then.
type phase struct {
	p       *progress
	name    string
	total   int // sequences in the phase
	batches int // batches of sequences
	budget  int // response budget: the most decoding steps of one batch
	start   time.Time
	last    time.Time       // when the last line was written
	steps   int             // decoding steps by then
	begun   int             // batches begun
	prev    toolloop.Status // sum over the batches that are done
	cur     toolloop.Status // the batch being generated
}

// phase starts a phase of total sequences, generated batch at a time.
func (p *progress) phase(name string, total, batch, budget int) *phase {
	now := p.now()
	return &phase{p: p, name: name, total: total, batches: (total + batch - 1) / max(batch, 1), budget: budget, start: now, last: now}
}

// batch begins the phase's next batch and returns the Progress to hand its
// toolloop.Run (nil for a nil phase: nobody listens).
func (ph *phase) batch() toolloop.Progress {
	if ph == nil {
		return nil
	}
	ph.prev = sumStatus(ph.prev, ph.cur)
	ph.cur = toolloop.Status{}
	ph.begun++
	return ph
}

// Update implements toolloop.Progress: it writes a line when p.every has
// passed since the last one.
func (ph *phase) Update(s toolloop.Status) {
	ph.cur = s
	now := ph.p.now()
	if now.Sub(ph.last) < ph.p.every {
		return
	}
	sum, elapsed := sumStatus(ph.prev, ph.cur), now.Sub(ph.start)
	line := fmt.Sprintf("%s: %d/%d sequences done, %d tokens (%s/s)", ph.name, sum.Finished, ph.total, sum.Tokens,
		perSecond(sum.Tokens, elapsed))
	if sum.ToolCalls > 0 {
		line += fmt.Sprintf(", %d tool calls", sum.ToolCalls)
	}
	line += "; " + elapsed.Round(time.Second).String()
	if steps := sum.Steps - ph.steps; steps >= minEtaSteps {
		stepsLeft := s.StepsLeft + (ph.batches-ph.begun)*ph.budget
		left := time.Duration(float64(now.Sub(ph.last)) / float64(steps) * float64(stepsLeft))
		line += ", at most " + left.Round(time.Second).String() + " left"
	}
	ph.last, ph.steps = now, sum.Steps
	ph.p.Printf("%s", line)
}

// minEtaSteps is the fewest decoding steps that the time left is estimated
// from.
const minEtaSteps = 10

// perSecond writes n per d with three significant digits, or all the digits
// before the point.
func perSecond(n int, d time.Duration) string {
	r := float64(n) / max(d.Seconds(), 1e-9)
	if r >= 100 {
		return fmt.Sprintf("%.0f", r)
	}
	return fmt.Sprintf("%.3g", r)
}

// sumStatus adds the counts of two batches' statuses; StepsLeft is b's.
func sumStatus(a, b toolloop.Status) toolloop.Status {
	return toolloop.Status{Total: a.Total + b.Total, Finished: a.Finished + b.Finished, Tokens: a.Tokens + b.Tokens,
		ToolCalls: a.ToolCalls + b.ToolCalls, Steps: a.Steps + b.Steps, StepsLeft: b.StepsLeft}
}

// diskBytes returns the total size of the files under dir.
func diskBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		n += info.Size()
		return nil
	})
	return n, err
}

// byteSize writes n bytes in the largest unit that keeps the number at least 1.
func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, u := float64(n)/unit, 0
	for v >= unit && u < 3 {
		v, u = v/unit, u+1
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGT"[u])
}
