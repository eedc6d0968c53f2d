package tokenizer

import (
	"fmt"
	"testing"
)

// compareEncode encodes texts with tok and with Hugging Face (tokenizer file
// path) and reports every difference; it returns the number of matches.
func compareEncode(t *testing.T, tok *Tokenizer, path string, texts []string) int {
	t.Helper()
	var want [][]int
	hfRef(t, "encode", path, texts, &want)
	if len(want) != len(texts) {
		t.Fatalf("reference returned %d encodings for %d texts", len(want), len(texts))
	}
	same, bad := 0, 0
	for i, s := range texts {
		got := tok.Encode(s)
		if again := tok.Encode(s); fmt.Sprint(again) != fmt.Sprint(got) { // now from the BPE cache
			t.Errorf("Encode(%+q) changed on a second call: %v, then %v", s, got, again)
		}
		if fmt.Sprint(got) == fmt.Sprint(want[i]) {
			same++
			continue
		}
		if bad++; bad <= 5 {
			t.Errorf("Encode(%+q):\n got %v\nwant %v", s, got, want[i])
		}
	}
	if same != len(texts) {
		t.Errorf("%d of %d encodings match", same, len(texts))
	}
	return same
}

func TestEncodeHandWritten(t *testing.T) {
	tok, path := qwen(t)
	n := compareEncode(t, tok, path, handWritten)
	t.Logf("%d of %d hand-written strings match", n, len(handWritten))
}

func TestEncodeMathProblems(t *testing.T) {
	tok, path := qwen(t)
	texts := mathProblems(t, 300)
	n := compareEncode(t, tok, path, texts)
	t.Logf("%d of %d MATH problems and solutions match", n, len(texts))
}

func TestEncodeFuzz(t *testing.T) {
	tok, path := qwen(t)
	texts := fuzzCorpus(1, 5000)
	n := compareEncode(t, tok, path, texts)
	t.Logf("%d of %d random strings match", n, len(texts))
}

// normalizeForTest is the text Encode sees after normalization, added tokens untouched.
func (t *Tokenizer) normalizeForTest(s string) string {
	var out string
	for len(s) > 0 {
		i, a := t.raw.next(s)
		if i < 0 {
			return out + t.normalize(s)
		}
		out += t.normalize(s[:i]) + a.Content
		s = s[i+len(a.Content):]
	}
	return out
}

// TestEncodeConcurrent encodes from several goroutines at once (run with -race).
func TestEncodeConcurrent(t *testing.T) {
	tok := NewBytes()
	texts := fuzzCorpus(8, 200)
	want := make([]string, len(texts))
	for i, s := range texts {
		want[i] = fmt.Sprint(tok.Encode(s))
	}
	done := make(chan string, 4)
	for g := range 4 {
		go func() {
			for i := range texts {
				k := (i + 50*g) % len(texts)
				if got := fmt.Sprint(tok.Encode(texts[k])); got != want[k] {
					done <- fmt.Sprintf("goroutine %d: text %d differs", g, k)
					return
				}
			}
			done <- ""
		}()
	}
	for range 4 {
		if msg := <-done; msg != "" {
			t.Error(msg)
		}
	}
}
