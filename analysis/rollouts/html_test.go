package rollouts

import (
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
)

// segment is a stretch of a scripted trajectory: tokens the model sampled, or
// tokens injected after a tool call.
type segment struct {
	injected bool
	tokens   []string
}

// scripted is a hand-built rollout with one tool call: model tokens, the
// injected tool-response turn, model tokens again. The mask is built from the
// script, 0 exactly on the injected segment.
func scripted(group, index int, adv float64, segs []segment) Record {
	r := Record{Version: Version, Step: 3, Rollout: 4, TrainStep: 4, ProblemID: `arith/<&>"1`, Problem: "What is 2*3? <b>bold</b>",
		Label: "6", Group: group, SampleIndex: index, PromptIDs: []int{1, 2, 3}, Prompt: "<|im_start|>user\nWhat is 2*3?<|im_end|>\n",
		Advantage: adv, Reward: 1, Correct: adv > 0, Pred: "6", Finish: "stop", ToolCalls: 1}
	for _, s := range segs {
		for _, tok := range s.tokens {
			r.ResponseIDs = append(r.ResponseIDs, 100+len(r.ResponseIDs))
			r.Tokens = append(r.Tokens, tok)
			if s.injected {
				r.Mask, r.LogProbs = append(r.Mask, 0), append(r.LogProbs, 0)
			} else {
				r.Mask, r.LogProbs = append(r.Mask, 1), append(r.LogProbs, -0.5)
			}
		}
	}
	return r
}

var toolTrajectory = []segment{
	{false, []string{"<tool_call>", "\n", `{"code": "print(2*3)"}`, "\n", "</tool_call>"}},
	{true, []string{"<|im_end|>", "\n", "<|im_start|>", "user", "\n", "<tool_response>", "\n", "6\n<script>alert(1)</script>", "</tool_response>", "<|im_end|>", "\n", "<|im_start|>", "assistant", "\n"}},
	{false, []string{`\boxed{6}`, " & ", "<|im_end|>"}},
}

// span is one token span of a rendered page.
type span struct {
	class, style, title, text string
}

// tokenSpans parses page (HTML, read leniently) and returns its spans of
// class tok, in order.
func tokenSpans(t *testing.T, page string) []span {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(page))
	dec.Strict, dec.AutoClose, dec.Entity = false, xml.HTMLAutoClose, xml.HTMLEntity
	var out []span
	var cur *span
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("parsing the page: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if tok.Name.Local != "span" {
				continue
			}
			s := span{}
			for _, a := range tok.Attr {
				switch a.Name.Local {
				case "class":
					s.class = a.Value
				case "style":
					s.style = a.Value
				case "title":
					s.title = a.Value
				}
			}
			if strings.Fields(s.class)[0] == "tok" && s.title != "" { // the legend's sample span has no title
				cur = &s
			}
		case xml.CharData:
			if cur != nil {
				cur.text += string(tok)
			}
		case xml.EndElement:
			if tok.Name.Local == "span" && cur != nil {
				out = append(out, *cur)
				cur = nil
			}
		}
	}
}

func TestWriteHTMLMarksExactlyTheInjectedTokens(t *testing.T) {
	recs := []Record{scripted(0, 0, 1.5, toolTrajectory), scripted(0, 1, -0.5, toolTrajectory)}
	var b strings.Builder
	if err := WriteHTML(&b, recs, HTMLOptions{Title: "step 3 <test>"}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, raw := range []string{"<script>alert", "<b>bold", "<test>", `<&>"1`} {
		if strings.Contains(page, raw) {
			t.Errorf("the page holds %q unescaped", raw)
		}
	}
	spans := tokenSpans(t, page)
	// by hand: the largest |advantage| is 1.5, so 1.5 gets opacity 0.15+0.6 = 0.75
	// and -0.5 gets 0.15 + 0.6/3 = 0.35
	colours := []string{"--adv:rgba(0,150,60,0.750)", "--adv:rgba(210,40,40,0.350)"}
	k := 0
	for i := range recs {
		for _, seg := range toolTrajectory {
			for _, text := range seg.tokens {
				if k >= len(spans) {
					t.Fatalf("%d token spans, want more", len(spans))
				}
				s := spans[k]
				k++
				if s.text != text {
					t.Errorf("span %d reads %q, want %q", k, s.text, text)
				}
				masked := strings.Contains(" "+s.class+" ", " masked ")
				if masked != seg.injected {
					t.Errorf("sample %d token %q: masked %v, want %v", i, text, masked, seg.injected)
				}
				if hasAdv := strings.Contains(s.style, "--adv:"); hasAdv == seg.injected {
					t.Errorf("sample %d token %q (injected %v): style %q", i, text, seg.injected, s.style)
				}
				if !seg.injected && !strings.Contains(s.style, colours[i]) {
					t.Errorf("sample %d token %q: style %q, want %s", i, text, s.style, colours[i])
				}
			}
		}
	}
	if k != len(spans) {
		t.Errorf("%d token spans, want %d", len(spans), k)
	}
}
