package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// Tokenizer encodes text into token ids and decodes ids into text, exactly as
// Hugging Face's tokenizers library does with the same tokenizer.json. It is
// safe for concurrent use.
type Tokenizer struct {
	// vocab holds the model's tokens (not the added ones) in their byte-level
	// form, indexed by id; "" where an id is unused.
	vocab []string
	// tokenBytes holds the bytes each id decodes to, indexed by id.
	tokenBytes [][]byte
	// ids maps a vocabulary entry's byte-level form to its id.
	ids map[string]int32
	// words maps the raw bytes of a piece to its id when BPE would merge the
	// piece into that single token, so that common words skip BPE; shortWords
	// holds the pieces of up to maxShortWord bytes, under packShort keys.
	words      map[string]int32
	shortWords map[uint64]int32
	// twoByteWords holds the token of each two-byte piece that is one token, else -1.
	twoByteWords []int32
	// cache remembers the BPE tokens ([]int) of pieces that are not single
	// tokens, up to maxCached of them (counted by cached).
	cache  sync.Map
	cached atomic.Int64
	// byteID is the token of each single byte.
	byteID [256]int32
	// merges maps a pair of ids to the merge that joins them.
	merges map[uint64]merge
	// mergeList keeps the merges in rank order, for Save.
	mergeList [][2]int32

	added      []AddedToken
	addedByID  map[int]*AddedToken
	addedByStr map[string]*AddedToken
	// raw and normalized are the added tokens matched before and after
	// normalization.
	raw, normalized addedMatcher

	nfc          bool // the normalizer is NFC (else none)
	ignoreMerges bool
	size         int // highest id + 1
}

// AddedToken is a token of the tokenizer.json "added_tokens" list: matched
// whole in text before the BPE model sees it.
type AddedToken struct {
	ID      int    `json:"id"`
	Content string `json:"content"`
	// Special tokens are dropped by Decode(ids, true).
	Special bool `json:"special"`
	// Normalized tokens are matched in the normalized text, the others in the
	// raw text.
	Normalized bool `json:"normalized"`
	SingleWord bool `json:"single_word"`
	LStrip     bool `json:"lstrip"`
	RStrip     bool `json:"rstrip"`
}

// fileJSON is the part of tokenizer.json that this package reads.
type fileJSON struct {
	Truncation    json.RawMessage `json:"truncation"`
	Padding       json.RawMessage `json:"padding"`
	AddedTokens   []AddedToken    `json:"added_tokens"`
	Normalizer    json.RawMessage `json:"normalizer"`
	PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
	PostProcessor json.RawMessage `json:"post_processor"`
	Decoder       json.RawMessage `json:"decoder"`
	Model         struct {
		Type                    string          `json:"type"`
		Dropout                 *float64        `json:"dropout"`
		ContinuingSubwordPrefix *string         `json:"continuing_subword_prefix"`
		EndOfWordSuffix         *string         `json:"end_of_word_suffix"`
		ByteFallback            bool            `json:"byte_fallback"`
		IgnoreMerges            bool            `json:"ignore_merges"`
		Vocab                   map[string]int  `json:"vocab"`
		Merges                  json.RawMessage `json:"merges"`
	} `json:"model"`
}

// component is the "type" (and the fields this package checks) of a
// normalizer, pre-tokenizer, post-processor or decoder.
type component struct {
	Type           string          `json:"type"`
	Normalizers    []component     `json:"normalizers"`
	Pretokenizers  []component     `json:"pretokenizers"`
	Pattern        json.RawMessage `json:"pattern"`
	Behavior       string          `json:"behavior"`
	Invert         bool            `json:"invert"`
	AddPrefixSpace bool            `json:"add_prefix_space"`
	UseRegex       bool            `json:"use_regex"`
}

// Load reads a Hugging Face tokenizer.json of the byte-level BPE kind that
// Qwen2 and Qwen3 use. Other kinds of tokenizer are refused with an error that
// says which part is not supported.
func Load(path string) (*Tokenizer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	t, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Parse is Load on the bytes of a tokenizer.json.
func Parse(data []byte) (*Tokenizer, error) {
	var f fileJSON
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("tokenizer: not a tokenizer.json: %w", err)
	}
	if !isNull(f.Truncation) {
		return nil, errors.New("tokenizer: truncation is not supported (want null)")
	}
	if !isNull(f.Padding) {
		return nil, errors.New("tokenizer: padding is not supported (want null)")
	}
	t := &Tokenizer{}
	var err error
	if t.nfc, err = checkNormalizer(f.Normalizer); err != nil {
		return nil, err
	}
	if err := checkPreTokenizer(f.PreTokenizer); err != nil {
		return nil, err
	}
	if err := checkByteLevel("post_processor", f.PostProcessor, true); err != nil {
		return nil, err
	}
	if err := checkByteLevel("decoder", f.Decoder, false); err != nil {
		return nil, err
	}
	m := &f.Model
	switch {
	case m.Type != "BPE":
		return nil, fmt.Errorf("tokenizer: model type %q is not supported (want BPE)", m.Type)
	case m.Dropout != nil && *m.Dropout != 0:
		return nil, errors.New("tokenizer: BPE dropout is not supported")
	case m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "":
		return nil, errors.New("tokenizer: continuing_subword_prefix is not supported")
	case m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "":
		return nil, errors.New("tokenizer: end_of_word_suffix is not supported")
	case m.ByteFallback:
		return nil, errors.New("tokenizer: byte_fallback is not supported")
	}
	t.ignoreMerges = m.IgnoreMerges
	merges, err := parseMerges(m.Merges)
	if err != nil {
		return nil, err
	}
	if err := t.build(m.Vocab, merges, f.AddedTokens); err != nil {
		return nil, err
	}
	return t, nil
}

// build fills the tables from a vocabulary (byte-level form to id), the merges
// in rank order and the added tokens.
func (t *Tokenizer) build(vocab map[string]int, merges [][2]string, added []AddedToken) error {
	if err := t.buildVocab(vocab, added); err != nil {
		return err
	}
	if err := t.buildMerges(merges); err != nil {
		return err
	}
	t.buildWords(len(vocab))
	if err := checkAddedIDs(t.ids, len(vocab), added); err != nil {
		return err
	}
	return t.buildAdded(added)
}

// buildVocab sizes the tables for the largest id and fills the id of each
// vocabulary entry and of each byte. Hugging Face numbers entries and added
// tokens densely from 0; ids are refused past twice their count (plus the 256
// bytes), so that the tables stay a small multiple of the file, while an id a
// little off still reaches the check that explains it.
func (t *Tokenizer) buildVocab(vocab map[string]int, added []AddedToken) error {
	limit := 2*(len(vocab)+len(added)) + 256
	for tok, id := range vocab {
		if id < 0 || id >= limit {
			return fmt.Errorf("tokenizer: vocab entry %q: id %d is outside 0..%d (%d entries, %d added tokens)",
				tok, id, limit-1, len(vocab), len(added))
		}
		t.size = max(t.size, id+1)
	}
	for _, a := range added {
		if a.ID < 0 || a.ID >= limit {
			return fmt.Errorf("tokenizer: added token %q: id %d is outside 0..%d (%d entries, %d added tokens)",
				a.Content, a.ID, limit-1, len(vocab), len(added))
		}
		t.size = max(t.size, a.ID+1)
	}
	t.vocab = make([]string, t.size)
	t.tokenBytes = make([][]byte, t.size)
	t.ids = make(map[string]int32, len(vocab))
	for tok, id := range vocab {
		if t.vocab[id] != "" {
			return fmt.Errorf("tokenizer: vocab entries %q and %q share id %d", t.vocab[id], tok, id)
		}
		t.vocab[id] = tok
		t.ids[tok] = int32(id)
		t.tokenBytes[id] = decodeByteLevel(tok)
	}
	for b := 0; b < 256; b++ {
		id, ok := t.ids[string(byteToRune[b])]
		if !ok {
			return fmt.Errorf("tokenizer: vocab lacks the byte-level token %q for byte 0x%02x", string(byteToRune[b]), b)
		}
		t.byteID[b] = id
	}
	return nil
}

// buildMerges fills the merge table; of two merges of one pair the first
// (lowest) rank wins.
func (t *Tokenizer) buildMerges(merges [][2]string) error {
	t.merges = make(map[uint64]merge, len(merges))
	t.mergeList = make([][2]int32, 0, len(merges))
	for rank, mg := range merges {
		a, okA := t.ids[mg[0]]
		b, okB := t.ids[mg[1]]
		ab, okAB := t.ids[mg[0]+mg[1]]
		if !okA || !okB || !okAB {
			return fmt.Errorf("tokenizer: merge %d (%q %q): token not in vocab", rank, mg[0], mg[1])
		}
		t.mergeList = append(t.mergeList, [2]int32{a, b})
		if _, dup := t.merges[pairKey(a, b)]; !dup { // the first (lowest) rank wins
			t.merges[pairKey(a, b)] = merge{rank: uint32(rank), id: ab}
		}
	}
	return nil
}

// buildWords fills the whole-word tables: a piece equal to a vocabulary entry
// is that one token only if BPE merges it into that token (always so under
// ignore_merges).
func (t *Tokenizer) buildWords(vocabSize int) {
	t.words = make(map[string]int32, vocabSize)
	t.shortWords = make(map[uint64]int32, vocabSize)
	t.twoByteWords = make([]int32, 1<<16)
	for i := range t.twoByteWords {
		t.twoByteWords[i] = -1
	}
	for id, tok := range t.vocab {
		if tok == "" {
			continue
		}
		raw := string(t.tokenBytes[id])
		if !t.ignoreMerges {
			if got := t.appendMerged(nil, raw); len(got) != 1 || got[0] != id {
				continue
			}
		}
		if len(raw) == 2 {
			t.twoByteWords[int(raw[0])<<8|int(raw[1])] = int32(id)
		}
		if len(raw) <= maxShortWord {
			t.shortWords[packShort(raw)] = int32(id)
		} else {
			t.words[raw] = int32(id)
		}
	}
}

// checkAddedIDs refuses added tokens whose ids are not the ones Hugging Face
// gives them: a token already in the vocabulary keeps its id there, any other
// the next id after the vocabulary (or after the added tokens so far). A file
// whose ids say otherwise would be encoded with other ids than it lists.
func checkAddedIDs(ids map[string]int32, vocabSize int, added []AddedToken) error {
	nextID := -1
	for _, a := range added {
		want := -1
		if id, ok := ids[a.Content]; ok {
			want = int(id)
		} else {
			if nextID < vocabSize {
				nextID = vocabSize
			}
			want = nextID
			nextID++
		}
		if a.ID != want {
			return fmt.Errorf("tokenizer: added token %q has id %d, but Hugging Face gives it id %d", a.Content, a.ID, want)
		}
	}
	return nil
}

// buildAdded fills the added-token tables and matchers.
func (t *Tokenizer) buildAdded(added []AddedToken) error {
	t.added = append([]AddedToken(nil), added...)
	sort.Slice(t.added, func(i, j int) bool { return t.added[i].ID < t.added[j].ID })
	t.addedByID = map[int]*AddedToken{}
	t.addedByStr = map[string]*AddedToken{}
	var raw, norm []*AddedToken
	for i := range t.added {
		a := &t.added[i]
		switch {
		case a.Content == "":
			return fmt.Errorf("tokenizer: added token %d is empty", a.ID)
		case !utf8.ValidString(a.Content):
			return fmt.Errorf("tokenizer: added token %d is not valid UTF-8", a.ID)
		case a.SingleWord || a.LStrip || a.RStrip:
			return fmt.Errorf("tokenizer: added token %q: single_word, lstrip and rstrip are not supported", a.Content)
		}
		if t.addedByID[a.ID] != nil {
			return fmt.Errorf("tokenizer: added tokens %q and %q share id %d", t.addedByID[a.ID].Content, a.Content, a.ID)
		}
		t.addedByID[a.ID] = a
		t.addedByStr[a.Content] = a
		t.tokenBytes[a.ID] = decodeByteLevel(a.Content)
		if a.Normalized {
			norm = append(norm, a)
		} else {
			raw = append(raw, a)
		}
	}
	t.raw = newAddedMatcher(raw)
	t.normalized = newAddedMatcher(norm)
	return nil
}

func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || bytes.Equal(raw, []byte("null"))
}

// checkNormalizer accepts no normalizer or NFC (alone or in a Sequence).
func checkNormalizer(raw json.RawMessage) (nfc bool, err error) {
	if isNull(raw) {
		return false, nil
	}
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return false, fmt.Errorf("tokenizer: normalizer: %w", err)
	}
	switch {
	case c.Type == "NFC":
		return true, nil
	case c.Type == "Sequence" && len(c.Normalizers) == 0:
		return false, nil
	case c.Type == "Sequence" && len(c.Normalizers) == 1 && c.Normalizers[0].Type == "NFC":
		return true, nil
	}
	return false, fmt.Errorf("tokenizer: normalizer %s is not supported (want NFC or none)", compact(raw))
}

// checkPreTokenizer accepts Qwen's: Split on qwenSplitPattern (isolated), then
// ByteLevel without its own regex and without a prefix space.
func checkPreTokenizer(raw json.RawMessage) error {
	var c component
	if !isNull(raw) {
		if err := json.Unmarshal(raw, &c); err != nil {
			return fmt.Errorf("tokenizer: pre_tokenizer: %w", err)
		}
	}
	bad := fmt.Errorf("tokenizer: pre_tokenizer %s is not supported (want Qwen's: Split on its regex, then ByteLevel without regex)", compact(raw))
	if c.Type != "Sequence" || len(c.Pretokenizers) != 2 {
		return bad
	}
	split, bl := c.Pretokenizers[0], c.Pretokenizers[1]
	var pattern struct{ Regex string }
	if split.Type != "Split" || json.Unmarshal(split.Pattern, &pattern) != nil || pattern.Regex != qwenSplitPattern ||
		split.Behavior != "Isolated" || split.Invert {
		return bad
	}
	if bl.Type != "ByteLevel" || bl.AddPrefixSpace || bl.UseRegex {
		return bad
	}
	return nil
}

// checkByteLevel accepts a ByteLevel component (or null, where nullOK).
func checkByteLevel(what string, raw json.RawMessage, nullOK bool) error {
	if isNull(raw) {
		if nullOK {
			return nil
		}
		return fmt.Errorf("tokenizer: %s is missing (want ByteLevel)", what)
	}
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return fmt.Errorf("tokenizer: %s: %w", what, err)
	}
	if c.Type != "ByteLevel" || c.AddPrefixSpace {
		return fmt.Errorf("tokenizer: %s %s is not supported (want ByteLevel)", what, compact(raw))
	}
	return nil
}

// parseMerges reads the merges in either format: ["a b", ...] or [["a", "b"], ...].
func parseMerges(raw json.RawMessage) ([][2]string, error) {
	if isNull(raw) {
		return nil, nil
	}
	var pairs [][2]string
	if err := json.Unmarshal(raw, &pairs); err == nil {
		return pairs, nil
	}
	var lines []string
	if err := json.Unmarshal(raw, &lines); err != nil {
		return nil, fmt.Errorf("tokenizer: merges: want [[a, b], ...] or [\"a b\", ...]: %w", err)
	}
	pairs = make([][2]string, len(lines))
	for i, l := range lines {
		k := bytes.IndexByte([]byte(l), ' ')
		if k < 0 || bytes.IndexByte([]byte(l[k+1:]), ' ') >= 0 {
			return nil, fmt.Errorf("tokenizer: merge %d %q: want two tokens separated by one space", i, l)
		}
		pairs[i] = [2]string{l[:k], l[k+1:]}
	}
	return pairs, nil
}

// compact shortens a JSON value for an error message.
func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	s := b.String()
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
