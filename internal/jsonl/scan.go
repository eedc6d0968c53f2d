package jsonl

import (
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// This file is the fast path of Ordered.Parse and DecodeString: a hand-written
// scanner for the well-formed lines that make up nearly every file, which
// splits an object into fields without encoding/json's Decoder (whose Token
// and Decode calls cost more than scoring a line). It accepts exactly what
// encoding/json accepts or less: whatever it does not accept (a malformed
// line, a repeated name, a name with an escape or invalid UTF-8, very deep
// nesting) goes to the slow path, which decides and words the error as
// before. FuzzOrderedFastPath checks the two paths agree.

// maxScanDepth bounds the nesting the fast path follows; deeper values go to
// the slow path, whose decoder has its own limit (10,000) and error.
const maxScanDepth = 100

// scanObject appends the fields of the JSON object raw to o (which must be
// empty), each name and value a sub-slice of raw, and reports whether raw is
// a well-formed object that the fast path handles. On false, o holds partial
// fields and must be reset.
func (o *Ordered) scanObject(raw []byte) bool {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return skipSpace(raw, i+1) == len(raw)
	}
	for {
		end, plain := scanString(raw, i)
		if end < 0 || !plain {
			return false // the slow path decodes a name with an escape or non-ASCII
		}
		name := raw[i+1 : end-1]
		if o.index(string(name)) >= 0 {
			return false
		}
		rawKey := raw[i:end]
		if i = skipSpace(raw, end); i >= len(raw) || raw[i] != ':' {
			return false
		}
		i = skipSpace(raw, i+1)
		vend := scanValue(raw, i, 1)
		if vend < 0 {
			return false
		}
		o.keys, o.rawKeys, o.vals = append(o.keys, name), append(o.rawKeys, rawKey), append(o.vals, raw[i:vend])
		if i = skipSpace(raw, vend); i >= len(raw) {
			return false
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case '}':
			return skipSpace(raw, i+1) == len(raw)
		default:
			return false
		}
	}
}

// skipSpace returns the index of the first byte of raw at or after i that is
// not JSON white space (space, tab, CR, LF).
func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\r' || raw[i] == '\n') {
		i++
	}
	return i
}

// scanValue returns the index just after the JSON value that starts at
// raw[i], or -1 when there is none there; depth is the nesting of the value.
func scanValue(raw []byte, i, depth int) int {
	if i >= len(raw) {
		return -1
	}
	switch c := raw[i]; {
	case c == '"':
		end, _ := scanString(raw, i)
		return end
	case c == '-' || c >= '0' && c <= '9':
		return scanNumber(raw, i)
	case c == '{' || c == '[':
		if depth >= maxScanDepth {
			return -1
		}
		return scanContainer(raw, i, depth)
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if len(raw)-i >= len(lit) && string(raw[i:i+len(lit)]) == lit {
			return i + len(lit)
		}
	}
	return -1
}

// scanContainer returns the index just after the object or array that starts
// at raw[i], or -1 when it is not well-formed.
func scanContainer(raw []byte, i, depth int) int {
	closer, object := byte(']'), raw[i] == '{'
	if object {
		closer = '}'
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == closer {
		return i + 1
	}
	for {
		if object {
			end, _ := scanString(raw, i)
			if end < 0 {
				return -1
			}
			if i = skipSpace(raw, end); i >= len(raw) || raw[i] != ':' {
				return -1
			}
			i = skipSpace(raw, i+1)
		}
		end := scanValue(raw, i, depth+1)
		if end < 0 {
			return -1
		}
		if i = skipSpace(raw, end); i >= len(raw) {
			return -1
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case closer:
			return i + 1
		default:
			return -1
		}
	}
}

// scanString returns the index just after the JSON string literal that
// starts at raw[i], or -1 when there is none, and whether it is plain: no
// escape and no byte from 0x80 up. Like encoding/json it refuses control
// characters and bad escapes and lets any byte from 0x80 up through; the
// decoders check UTF-8.
func scanString(raw []byte, i int) (end int, plain bool) {
	if i >= len(raw) || raw[i] != '"' {
		return -1, false
	}
	plain = true
	for i++; i < len(raw); i++ {
		c := raw[i]
		if !stringSpecial[c] {
			continue
		}
		switch {
		case c == '"':
			return i + 1, plain
		case c < 0x20:
			return -1, false
		case c >= 0x80:
			plain = false
		default: // a backslash
			plain = false
			if i++; i >= len(raw) {
				return -1, false
			}
			switch raw[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if hex4(raw[i+1:]) < 0 {
					return -1, false
				}
				i += 4
			default:
				return -1, false
			}
		}
	}
	return -1, false
}

// stringSpecial marks the bytes that scanString must look at: the quote, the
// backslash, control characters and the bytes of non-ASCII UTF-8.
var stringSpecial = func() (t [256]bool) {
	for c := range t {
		t[c] = c < 0x20 || c == '"' || c == '\\' || c >= 0x80
	}
	return t
}()

// scanNumber returns the index just after the JSON number that starts at
// raw[i] (-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?), or -1.
func scanNumber(raw []byte, i int) int {
	if raw[i] == '-' {
		i++
	}
	switch {
	case i < len(raw) && raw[i] == '0':
		i++
	case i < len(raw) && raw[i] >= '1' && raw[i] <= '9':
		i = skipDigits(raw, i)
	default:
		return -1
	}
	if i < len(raw) && raw[i] == '.' {
		if j := skipDigits(raw, i+1); j > i+1 {
			i = j
		} else {
			return -1
		}
	}
	if i < len(raw) && (raw[i] == 'e' || raw[i] == 'E') {
		i++
		if i < len(raw) && (raw[i] == '+' || raw[i] == '-') {
			i++
		}
		if j := skipDigits(raw, i); j > i {
			i = j
		} else {
			return -1
		}
	}
	return i
}

func skipDigits(raw []byte, i int) int {
	for i < len(raw) && raw[i] >= '0' && raw[i] <= '9' {
		i++
	}
	return i
}

// hex4 returns the value of the four hex digits that start b, or -1.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// DecodeString returns the JSON string literal raw decoded exactly as
// json.Unmarshal into a string decodes it (an invalid UTF-8 byte or a lone
// surrogate escape becomes U+FFFD), and false when raw is anything else: a
// malformed string, another JSON type, or white space around the literal.
// It is the fast way to read a field that Ordered.Get returned.
func DecodeString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	i := 1
	for i < len(raw) && !stringSpecial[raw[i]] {
		i++
	}
	if i == len(raw)-1 && raw[i] == '"' { // plain ASCII: the common label
		return string(raw[1:i]), true
	}
	var b strings.Builder
	b.Grow(len(raw))
	start := 1 // the bytes from start to i are still to be written
	for ; i < len(raw); i++ {
		switch c := raw[i]; {
		case !stringSpecial[c], c >= 0x80: // UTF-8 is checked as written
		case c == '"':
			if i != len(raw)-1 {
				return "", false
			}
			writeUTF8(&b, raw[start:i])
			return b.String(), true
		case c < 0x20:
			return "", false
		default: // a backslash
			writeUTF8(&b, raw[start:i])
			n := writeEscape(&b, raw[i:])
			if n < 0 {
				return "", false
			}
			i += n - 1
			start = i + 1
		}
	}
	return "", false
}

// writeEscape writes the character that the escape at the start of esc
// stands for, as encoding/json decodes it, and returns the escape's length
// (12 for a surrogate pair), or -1 when it is not a valid escape.
func writeEscape(b *strings.Builder, esc []byte) int {
	if len(esc) < 2 {
		return -1
	}
	switch c := esc[1]; c {
	case '"', '\\', '/':
		b.WriteByte(c)
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case 'u':
		r := hex4(esc[2:])
		if r < 0 {
			return -1
		}
		if utf16.IsSurrogate(r) {
			r2 := rune(-1)
			if len(esc) >= 12 && esc[6] == '\\' && esc[7] == 'u' {
				r2 = hex4(esc[8:])
			}
			if pair := utf16.DecodeRune(r, r2); pair != unicode.ReplacementChar {
				b.WriteRune(pair)
				return 12
			}
			r = unicode.ReplacementChar
		}
		b.WriteRune(r)
		return 6
	default:
		return -1
	}
	return 2
}

// writeUTF8 writes s to b with each byte that is not valid UTF-8 replaced by
// U+FFFD, as encoding/json decodes a string.
func writeUTF8(b *strings.Builder, s []byte) {
	if utf8.Valid(s) {
		b.Write(s)
		return
	}
	for len(s) > 0 {
		r, size := utf8.DecodeRune(s) // RuneError, 1 for a bad byte
		b.WriteRune(r)
		s = s[size:]
	}
}
