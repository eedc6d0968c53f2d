package tokenizer

import "testing"

// pieces returns the pre-tokenizer's pieces of s in byte-level form, as the
// reference prints them.
func pieces(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		j := pieceEnd(s, i)
		out = append(out, byteLevelString(s[i:j]))
		i = j
	}
	return out
}

// TestPreTokenizerMatchesHF compares the split of raw text (no normalization,
// no added tokens) with Hugging Face's pre-tokenizer.
func TestPreTokenizerMatchesHF(t *testing.T) {
	_, path := qwen(t)
	texts := append(append([]string{}, handWritten...), fuzzCorpus(10, 2000)...)
	var want [][]string
	hfRef(t, "pretok", path, texts, &want)
	bad := 0
	for i, s := range texts {
		if got := pieces(s); !equalStrings(got, want[i]) {
			if bad++; bad <= 5 {
				t.Errorf("pieces(%+q):\n got %q\nwant %q", s, got, want[i])
			}
		}
	}
	t.Logf("%d of %d splits match", len(texts)-bad, len(texts))
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
