package tokenizer

import "unicode/utf8"

// byteToRune is GPT-2's byte-level alphabet: every byte is shown as a printable
// rune, so that vocabulary entries are valid text. Printable Latin-1 bytes map to
// themselves; the others map, in order, to U+0100 and up.
var byteToRune [256]rune

// runeToByte inverts byteToRune.
var runeToByte = map[rune]byte{}

func init() {
	n := 0
	for b := 0; b < 256; b++ {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			byteToRune[b] = rune(b)
		} else {
			byteToRune[b] = rune(256 + n)
			n++
		}
		runeToByte[byteToRune[b]] = byte(b)
	}
}

// byteLevelString returns the byte-level form of raw bytes, as written in a
// tokenizer.json vocabulary.
func byteLevelString(raw string) string {
	out := make([]byte, 0, 2*len(raw))
	for i := 0; i < len(raw); i++ {
		out = utf8.AppendRune(out, byteToRune[raw[i]])
	}
	return string(out)
}

// decodeByteLevel returns the bytes a token stands for, the way Hugging Face's
// ByteLevel decoder does: every rune mapped back to its byte, or, if any rune is
// outside the byte-level alphabet, the token's own UTF-8 bytes.
func decodeByteLevel(token string) []byte {
	out := make([]byte, 0, len(token))
	for _, r := range token {
		b, ok := runeToByte[r]
		if !ok {
			return []byte(token)
		}
		out = append(out, b)
	}
	return out
}

// appendLossyUTF8 appends b to dst as text, replacing each maximal ill-formed
// subsequence with U+FFFD, as Rust's String::from_utf8_lossy does (the Unicode
// "substitution of maximal subparts" practice).
func appendLossyUTF8(dst []byte, b []byte) []byte {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			dst = append(dst, c)
			i++
			continue
		}
		if r, n := utf8.DecodeRune(b[i:]); r != utf8.RuneError || n > 1 {
			dst = append(dst, b[i:i+n]...)
			i += n
			continue
		}
		// Invalid: skip the longest prefix of a valid sequence (at least one byte).
		i += maximalSubpart(b[i:])
		dst = append(dst, "\uFFFD"...)
	}
	return dst
}

// maximalSubpart returns the length (at least 1) of the longest prefix of b that
// starts a well-formed UTF-8 sequence but does not complete it.
func maximalSubpart(b []byte) int {
	c := b[0]
	var need int
	lo, hi := byte(0x80), byte(0xBF) // allowed range of the second byte
	switch {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
		need = 2
	case c == 0xED:
		need, hi = 2, 0x9F
	case c == 0xF0:
		need, lo = 3, 0x90
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	default:
		return 1
	}
	n := 1
	for k := 0; k < need && n < len(b); k++ {
		x := b[n]
		if k == 0 {
			if x < lo || x > hi {
				return n
			}
		} else if x < 0x80 || x > 0xBF {
			return n
		}
		n++
	}
	return n
}
