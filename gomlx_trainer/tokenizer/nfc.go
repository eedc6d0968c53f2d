package tokenizer

import (
	"sort"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// nfc returns the NFC form of s as Hugging Face's NFC normalizer computes it.
// Two things differ from golang.org/x/text/unicode/norm, which is used for its
// tables: Hugging Face's tables are from an older Unicode version (the code
// points in nfcUnknown, added since, are left alone: combining class 0, no
// decomposition, no composition), and it does not apply the Stream-Safe Text
// Format, which makes x/text insert U+034F after 30 combining marks in a row.
func nfc(s string) string {
	if norm.NFC.QuickSpanString(s) == len(s) {
		return s // already NFC under both (see nfcSlow for why)
	}
	return nfcSlow(s)
}

// A text that x/text's quick check finds in NFC is in NFC for Hugging Face
// too: the code points Hugging Face does not know only add combining class 0
// starters, which block more compositions and allow more orders, never fewer.

// nfcChar is a code point with its canonical combining class.
type nfcChar struct {
	r   rune
	ccc uint8
}

// nfcSlow decomposes, reorders and recomposes s (the canonical algorithm,
// without any limit on the length of a run of combining marks).
func nfcSlow(s string) string {
	// Canonical decomposition.
	chars := make([]nfcChar, 0, len(s))
	for _, r := range s {
		if nfcUnknown[r] {
			chars = append(chars, nfcChar{r, 0})
			continue
		}
		d := norm.NFD.String(string(r))
		for _, x := range d {
			c := uint8(0)
			if !nfcUnknown[x] {
				c = norm.NFD.PropertiesString(string(x)).CCC()
			}
			chars = append(chars, nfcChar{x, c})
		}
	}
	// Canonical ordering: sort each run of combining marks by class, stably.
	for i := 0; i < len(chars); {
		if chars[i].ccc == 0 {
			i++
			continue
		}
		j := i
		for j < len(chars) && chars[j].ccc != 0 {
			j++
		}
		run := chars[i:j]
		sort.SliceStable(run, func(a, b int) bool { return run[a].ccc < run[b].ccc })
		i = j
	}
	// Canonical composition.
	out := chars[:0]
	starter := -1 // index in out of the last starter
	for _, c := range chars {
		if starter >= 0 {
			last := out[len(out)-1].ccc
			blocked := len(out)-1 != starter && (last == 0 || last >= c.ccc)
			if !blocked {
				if p, ok := composePair(out[starter].r, c.r); ok {
					out[starter].r = p
					continue
				}
			}
		}
		if c.ccc == 0 {
			starter = len(out)
		}
		out = append(out, c)
	}
	b := make([]byte, 0, len(s))
	for _, c := range out {
		b = utf8.AppendRune(b, c.r)
	}
	return string(b)
}

// compositions caches composePair's answers.
var compositions sync.Map // [2]rune -> rune (-1: none)

// composePair returns the primary composite of a starter and a following code
// point, if there is one that Hugging Face's tables know.
func composePair(a, b rune) (rune, bool) {
	if nfcUnknown[a] || nfcUnknown[b] {
		return 0, false
	}
	key := [2]rune{a, b}
	if v, ok := compositions.Load(key); ok {
		p := v.(rune)
		return p, p >= 0
	}
	p := rune(-1)
	pair := string(a) + string(b)
	if c := norm.NFC.String(pair); c != pair {
		if r, n := utf8.DecodeRuneInString(c); n == len(c) && !nfcUnknown[r] {
			p = r
		}
	}
	compositions.Store(key, p)
	return p, p >= 0
}
