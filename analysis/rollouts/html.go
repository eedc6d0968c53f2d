package rollouts

import (
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"
)

// HTMLOptions say how WriteHTML lays out its page.
type HTMLOptions struct {
	Title string // the page's heading (and <title>)
	// Fragment leaves out <!DOCTYPE>, <html>, <head> and <body>, for a page
	// that embeds the view (a notebook cell); the styles stay scoped to it.
	Fragment bool
}

// WriteHTML writes recs as one self-contained HTML page (inline CSS and a
// few characters of inline JavaScript for the colour toggle; nothing from
// the network): a heading per sample with its problem, label, reward,
// verdict, finish, advantage and token counts, the prompt, and the response
// token by token. Each response token is a <span class="tok"> holding its
// decoded text, its id, mask, old log-prob and advantage in its title (shown
// on hover). A token the loss trained on (mask 1) has its background set by
// the sequence's advantage (green above 0, red below, the strongest colour at
// the largest |advantage| on the page); a token with mask 0 has the class
// masked instead and is drawn grey and hatched. A button switches the
// colours to the log-prob (the darker, the less likely the token was). Every
// text is HTML-escaped.
func WriteHTML(w io.Writer, recs []Record, o HTMLOptions) error {
	var b strings.Builder
	if !o.Fragment {
		fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>%s</title></head>\n<body>\n", html.EscapeString(o.Title))
	}
	b.WriteString(style)
	scale := maxAbsAdvantage(recs)
	fmt.Fprintf(&b, "<div class=\"rollouts\">\n<h1>%s</h1>\n", html.EscapeString(o.Title))
	fmt.Fprintf(&b, legend, scale)
	for i, r := range recs {
		writeSample(&b, i, r, scale)
	}
	b.WriteString("</div>\n")
	if !o.Fragment {
		b.WriteString("</body></html>\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

const style = `<style>
.rollouts { font-family: sans-serif; font-size: 14px; }
.rollouts .sample { border-top: 1px solid #999; margin-top: 1.5em; }
.rollouts table.facts td, .rollouts table.facts th { text-align: left; padding: 1px 8px 1px 0; vertical-align: top; }
.rollouts pre { white-space: pre-wrap; word-break: break-all; font-size: 13px; line-height: 1.5; }
.rollouts pre.prompt { color: #555; background: #f6f6f6; padding: 4px; }
.rollouts .tok { background: var(--adv); border-right: 1px solid rgba(0,0,0,0.08); }
.rollouts.by-logprob .tok { background: var(--lp); }
.rollouts .tok.masked { background: repeating-linear-gradient(45deg, #e4e4e4, #e4e4e4 3px, #d0d0d0 3px, #d0d0d0 6px); color: #666; }
.rollouts .right { color: #060; font-weight: bold; }
.rollouts .wrong { color: #a00; font-weight: bold; }
.rollouts .swatch { padding: 0 6px; }
</style>
`

const legend = `<p>Response tokens: background by the sequence's advantage
(<span class="swatch" style="background:rgba(0,150,60,0.75)">+</span> positive,
<span class="swatch" style="background:rgba(210,40,40,0.75)">−</span> negative; full colour at |advantage| %.3g),
<span class="tok masked">hatched grey</span>: loss mask 0 (tokens the model did not sample: tool responses and template
glue, or a sample left out of the loss). Hover a token for its id, mask, log-prob and advantage.
<button type="button" onclick="this.closest('.rollouts').classList.toggle('by-logprob')">colour by advantage / by log-prob</button>
(by log-prob: the darker, the less likely the sampled token was).</p>
`

// writeSample writes one record: its facts, its prompt and its tokens.
func writeSample(b *strings.Builder, i int, r Record, scale float64) {
	verdict := `<span class="wrong">wrong</span>`
	if r.Correct {
		verdict = `<span class="right">correct</span>`
	}
	if r.ScorerError != "" {
		verdict = "scorer error: " + html.EscapeString(r.ScorerError)
	}
	trained, masked := 0, 0
	for _, m := range r.Mask {
		if m != 0 {
			trained++
		} else {
			masked++
		}
	}
	train := "left out of the loss"
	if r.TrainStep > 0 {
		train = fmt.Sprintf("optimizer step %d", r.TrainStep)
	}
	fmt.Fprintf(b, "<div class=\"sample\" id=\"sample-%d\">\n<h2>sample %d: group %d, #%d — %s</h2>\n<table class=\"facts\">\n", i, i, r.Group, r.SampleIndex, html.EscapeString(r.ProblemID))
	row := func(k, v string) { fmt.Fprintf(b, "<tr><th>%s</th><td>%s</td></tr>\n", k, v) }
	row("problem", html.EscapeString(r.Problem))
	row("label", html.EscapeString(r.Label))
	row("verdict", fmt.Sprintf("%s (answer read: %s)", verdict, html.EscapeString(strconv.Quote(r.Pred))))
	row("reward", fmt.Sprintf("%g", r.Reward))
	row("advantage", fmt.Sprintf("%+.4f (%s)", r.Advantage, train))
	row("finish", fmt.Sprintf("%s, %d tool calls (%d errors)", html.EscapeString(string(r.Finish)), r.ToolCalls, r.ToolErrors))
	row("tokens", fmt.Sprintf("prompt %d, response %d: %d with mask 1, %d with mask 0", len(r.PromptIDs), len(r.ResponseIDs), trained, masked))
	fmt.Fprintf(b, "</table>\n<details><summary>prompt</summary><pre class=\"prompt\">%s</pre></details>\n<pre class=\"response\">", html.EscapeString(r.Prompt))
	for k, text := range r.Tokens {
		writeToken(b, r, k, text, scale)
	}
	b.WriteString("</pre>\n</div>\n")
}

// writeToken writes response token k of r as a span.
func writeToken(b *strings.Builder, r Record, k int, text string, scale float64) {
	lp := r.LogProbs[k]
	title := fmt.Sprintf("id %d · mask %g · log-prob %.4f (p %.3f) · advantage %+.4f", r.ResponseIDs[k], r.Mask[k], lp, math.Exp(float64(lp)), r.Advantage)
	if r.Mask[k] == 0 {
		fmt.Fprintf(b, `<span class="tok masked" title="%s">%s</span>`, html.EscapeString(title), html.EscapeString(text))
		return
	}
	fmt.Fprintf(b, `<span class="tok" style="--adv:%s;--lp:%s" title="%s">%s</span>`,
		advantageColour(r.Advantage, scale), logProbColour(lp), html.EscapeString(title), html.EscapeString(text))
}

// advantageColour is the CSS background of a token with advantage a on a page
// whose largest |advantage| is scale: green above 0, red below, its opacity
// 0.15 + 0.6·|a|/scale; transparent for a = 0.
func advantageColour(a, scale float64) string {
	if a == 0 || scale <= 0 {
		return "transparent"
	}
	alpha := 0.15 + 0.6*math.Min(math.Abs(a)/scale, 1)
	if a > 0 {
		return fmt.Sprintf("rgba(0,150,60,%.3f)", alpha)
	}
	return fmt.Sprintf("rgba(210,40,40,%.3f)", alpha)
}

// logProbColour is the CSS background of a token of log-prob lp: purple with
// opacity 0.8·(1 − p).
func logProbColour(lp float32) string {
	return fmt.Sprintf("rgba(110,60,200,%.3f)", 0.8*(1-math.Min(math.Exp(float64(lp)), 1)))
}

// maxAbsAdvantage is the largest |advantage| of the samples the loss took.
func maxAbsAdvantage(recs []Record) float64 {
	m := 0.0
	for _, r := range recs {
		if r.TrainStep > 0 {
			m = math.Max(m, math.Abs(r.Advantage))
		}
	}
	return m
}
