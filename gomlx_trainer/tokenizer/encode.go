package tokenizer

import (
	"sort"
	"strings"
	"unicode/utf8"
)

// addedMatcher finds added tokens in text: at the leftmost position where any
// matches, the longest one, as Hugging Face's leftmost-longest Aho-Corasick
// search does.
type addedMatcher struct {
	// byFirst lists, for each first byte, the tokens starting with it, longest first.
	byFirst [256][]*AddedToken
	// first is the only first byte of all tokens, or -1 if there are several.
	first int
	empty bool
}

func newAddedMatcher(tokens []*AddedToken) addedMatcher {
	m := addedMatcher{first: -1, empty: len(tokens) == 0}
	firsts := map[byte]bool{}
	for _, a := range tokens {
		b := a.Content[0]
		m.byFirst[b] = append(m.byFirst[b], a)
		firsts[b] = true
	}
	for b := range m.byFirst {
		sort.SliceStable(m.byFirst[b], func(i, j int) bool {
			return len(m.byFirst[b][i].Content) > len(m.byFirst[b][j].Content)
		})
	}
	if len(firsts) == 1 {
		for b := range firsts {
			m.first = int(b)
		}
	}
	return m
}

// next returns the position and token of the first match in s, or -1, nil.
func (m *addedMatcher) next(s string) (int, *AddedToken) {
	if m.empty {
		return -1, nil
	}
	for i := 0; i < len(s); i++ {
		if m.first >= 0 {
			k := strings.IndexByte(s[i:], byte(m.first))
			if k < 0 {
				return -1, nil
			}
			i += k
		}
		for _, a := range m.byFirst[s[i]] {
			if strings.HasPrefix(s[i:], a.Content) {
				return i, a
			}
		}
	}
	return -1, nil
}

// Encode returns the token ids of text, as Hugging Face's
// tokenizer.encode(text, add_special_tokens=False) does; since Qwen's
// tokenizers add no BOS or EOS, this is also what add_special_tokens=True gives.
// Added tokens written in the text (<|im_start|>, <tool_call>, ...) become
// their ids. Invalid UTF-8 in text is first replaced by U+FFFD, one per maximal
// ill-formed subsequence.
func (t *Tokenizer) Encode(text string) []int {
	return t.AppendEncode(make([]int, 0, len(text)/3+1), text)
}

// AppendEncode appends the ids of Encode(text) to ids and returns the result.
func (t *Tokenizer) AppendEncode(ids []int, text string) []int {
	if !utf8.ValidString(text) {
		text = string(appendLossyUTF8(nil, []byte(text)))
	}
	for len(text) > 0 {
		i, a := t.raw.next(text)
		if i < 0 {
			return t.appendNormalized(ids, text)
		}
		ids = t.appendNormalized(ids, text[:i])
		ids = append(ids, a.ID)
		text = text[i+len(a.Content):]
	}
	return ids
}

// appendNormalized encodes a segment free of raw-matched added tokens:
// normalization, then the added tokens matched in normalized text, then BPE.
func (t *Tokenizer) appendNormalized(ids []int, seg string) []int {
	if seg == "" {
		return ids
	}
	seg = t.normalize(seg)
	for len(seg) > 0 {
		i, a := t.normalized.next(seg)
		if i < 0 {
			return t.appendPieces(ids, seg)
		}
		ids = t.appendPieces(ids, seg[:i])
		ids = append(ids, a.ID)
		seg = seg[i+len(a.Content):]
	}
	return ids
}

// normalize applies the tokenizer's normalizer to a segment.
func (t *Tokenizer) normalize(seg string) string {
	if t.nfc {
		return nfc(seg)
	}
	return seg
}

// appendPieces pre-tokenizes s and appends the BPE tokens of each piece.
func (t *Tokenizer) appendPieces(ids []int, s string) []int {
	for i := 0; i < len(s); {
		j := pieceEnd(s, i)
		ids = t.appendBPE(ids, s[i:j])
		i = j
	}
	return ids
}

// Decode returns the text of ids, as Hugging Face's tokenizer.decode(ids,
// skip_special_tokens=skipSpecial) does: the bytes of all tokens joined, with
// each ill-formed UTF-8 sequence shown as U+FFFD. With skipSpecial, tokens
// marked special (<|im_start|>, <|im_end|>, <|endoftext|>, the vision tokens)
// are dropped; the tool and think tags are kept. Ids outside the vocabulary are
// skipped, as Hugging Face does.
func (t *Tokenizer) Decode(ids []int, skipSpecial bool) string {
	raw := make([]byte, 0, 4*len(ids))
	for _, id := range ids {
		if id < 0 || id >= t.size {
			continue
		}
		if a := t.addedByID[id]; a != nil {
			if skipSpecial && a.Special {
				continue
			}
		} else if t.vocab[id] == "" {
			continue
		} else if skipSpecial && t.isSpecialContent(t.vocab[id]) {
			continue
		}
		raw = append(raw, t.tokenBytes[id]...)
	}
	if utf8.Valid(raw) {
		return string(raw)
	}
	return string(appendLossyUTF8(make([]byte, 0, len(raw)+8), raw))
}

// isSpecialContent reports whether a vocabulary entry has the content of a
// special added token (Hugging Face skips those too).
func (t *Tokenizer) isSpecialContent(tok string) bool {
	a := t.addedByStr[tok]
	return a != nil && a.Special
}

// TokenID returns the id of an added token (by its content, e.g. "<|im_end|>")
// or of a vocabulary entry (by its byte-level form as written in
// tokenizer.json, e.g. "Ġthe"), as Hugging Face's token_to_id does.
func (t *Tokenizer) TokenID(token string) (int, bool) {
	if a := t.addedByStr[token]; a != nil {
		return a.ID, true
	}
	if id, ok := t.ids[token]; ok {
		return int(id), true
	}
	return 0, false
}

// Token returns the vocabulary entry (byte-level form) or added token content of id.
func (t *Tokenizer) Token(id int) (string, bool) {
	if a := t.addedByID[id]; a != nil {
		return a.Content, true
	}
	if id >= 0 && id < t.size && t.vocab[id] != "" {
		return t.vocab[id], true
	}
	return "", false
}

// VocabSize returns the number of token ids, added tokens included (the highest
// id + 1): 151,669 for Qwen3. Models may have larger, padded embedding tables.
func (t *Tokenizer) VocabSize() int { return t.size }

// AddedTokens returns the added tokens in id order.
func (t *Tokenizer) AddedTokens() []AddedToken { return append([]AddedToken(nil), t.added...) }
