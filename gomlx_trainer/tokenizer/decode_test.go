package tokenizer

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// compareDecode decodes id sequences with tok and with Hugging Face, with and
// without skipping special tokens.
func compareDecode(t *testing.T, tok *Tokenizer, path string, seqs [][]int) int {
	t.Helper()
	var want [][2]string
	hfRef(t, "decode", path, seqs, &want)
	same, bad := 0, 0
	for i, ids := range seqs {
		g0, g1 := tok.Decode(ids, false), tok.Decode(ids, true)
		if g0 == want[i][0] && g1 == want[i][1] {
			same++
			continue
		}
		if bad++; bad <= 5 {
			t.Errorf("Decode(%v):\n got %+q, %+q\nwant %+q, %+q", ids, g0, g1, want[i][0], want[i][1])
		}
	}
	if same != len(seqs) {
		t.Errorf("%d of %d decodings match", same, len(seqs))
	}
	return same
}

// TestDecodeMatchesHF decodes the encodings of the test strings and random id
// sequences (which split UTF-8 sequences and mix in special tokens).
func TestDecodeMatchesHF(t *testing.T) {
	tok, path := qwen(t)
	var seqs [][]int
	for _, s := range append(append([]string{}, handWritten...), fuzzCorpus(2, 500)...) {
		seqs = append(seqs, tok.Encode(s))
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for range 500 {
		ids := make([]int, 1+rng.IntN(30))
		for k := range ids {
			switch rng.IntN(4) {
			case 0:
				ids[k] = rng.IntN(256) // single bytes: often invalid UTF-8
			case 1:
				ids[k] = 151643 + rng.IntN(26) // added tokens
			default:
				ids[k] = rng.IntN(tok.VocabSize())
			}
		}
		seqs = append(seqs, ids)
	}
	n := compareDecode(t, tok, path, seqs)
	t.Logf("%d of %d id sequences decode identically (with and without special tokens)", n, len(seqs))
}

// TestDecodeRoundTrip checks Decode(Encode(s)) == s for NFC text.
func TestDecodeRoundTrip(t *testing.T) {
	tok, _ := qwen(t)
	for _, s := range append(append([]string{}, handWritten...), "e\u0301 → é") {
		got := tok.Decode(tok.Encode(s), false)
		if want := tok.normalizeForTest(s); got != want {
			t.Errorf("Decode(Encode(%+q)) = %+q, want %+q", s, got, want)
		}
	}
	if got := tok.Decode(tok.Encode("e\u0301"), false); got != "é" {
		t.Errorf("NFC: Decode(Encode(e + U+0301)) = %+q, want é", got)
	}
	if got := tok.Decode(tok.Encode("<|im_start|>user\n<tool_call>x</tool_call><|im_end|>"), true); got != "user\n<tool_call>x</tool_call>" {
		t.Errorf("skip special kept %q", got)
	}
}

// TestBytesTokenizer saves NewBytes() as tokenizer.json and checks that Hugging
// Face loads it and encodes and decodes as the Go tokenizer does, and that
// Load reads it back.
func TestBytesTokenizer(t *testing.T) {
	b := NewBytes()
	if b.VocabSize() != 282 {
		t.Errorf("VocabSize() = %d, want 282", b.VocabSize())
	}
	path := filepath.Join(t.TempDir(), "bytes.json")
	if err := b.Save(path); err != nil {
		t.Fatal(err)
	}
	texts := append(append([]string{}, handWritten...), fuzzCorpus(4, 1000)...)
	n := compareEncode(t, b, path, texts)
	var seqs [][]int
	for _, s := range texts[:300] {
		seqs = append(seqs, b.Encode(s))
	}
	m := compareDecode(t, b, path, seqs)
	t.Logf("byte vocabulary: %d of %d encodings, %d of %d decodings match Hugging Face", n, len(texts), m, len(seqs))
	again, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range texts[:200] {
		if a, b := again.Encode(s), b.Encode(s); len(a) != len(b) {
			t.Fatalf("reloaded tokenizer encodes %q differently", s)
		}
	}
	if id, ok := b.TokenID("<|im_end|>"); !ok || id != 258 {
		t.Errorf("TokenID(<|im_end|>) = %d, %v", id, ok)
	}
}

// TestSaveQwen writes the loaded Qwen3 tokenizer back out and checks that
// Hugging Face encodes the same as with the original file.
func TestSaveQwen(t *testing.T) {
	if testing.Short() {
		t.Skip("writes an 11 MB file")
	}
	tok, _ := qwen(t)
	path := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := tok.Save(path); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Size() < 1<<20 {
		t.Fatalf("saved file: %v", err)
	}
	compareEncode(t, tok, path, append(append([]string{}, handWritten...), fuzzCorpus(5, 300)...))
}
