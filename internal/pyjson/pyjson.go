package pyjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Dumps returns the Python json.dumps(json.loads(data), ensure_ascii=False)
// form of the JSON value in data. Duplicate object keys keep their first
// position and their last value, as Python's dict does.
func Dumps(data []byte) (string, error) {
	v, err := parse(data)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	writeValue(&b, v)
	return b.String(), nil
}

// Quote returns a string in the form json.dumps(s, ensure_ascii=False) gives it.
func Quote(s string) string {
	var b strings.Builder
	writeString(&b, s)
	return b.String()
}

// value is a parsed JSON value: nil, bool, string, number (the literal), *object or []value.
type value any

type number string

type object struct {
	keys []string
	vals map[string]value
}

func parse(data []byte) (value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parseValue(dec)
	if err != nil {
		return nil, fmt.Errorf("pyjson: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("pyjson: trailing data after the JSON value")
	}
	return v, nil
}

func parseValue(dec *json.Decoder) (value, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &object{vals: map[string]value{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k := kt.(string)
				v, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				if _, dup := o.vals[k]; !dup {
					o.keys = append(o.keys, k)
				}
				o.vals[k] = v
			}
			_, err := dec.Token() // '}'
			return o, err
		case '[':
			list := []value{}
			for dec.More() {
				v, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			_, err := dec.Token() // ']'
			return list, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case json.Number:
		return number(t), nil
	default: // nil, bool, string
		return t, nil
	}
}

func writeValue(b *strings.Builder, v value) {
	switch t := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if t {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case string:
		writeString(b, t)
	case number:
		b.WriteString(formatNumber(string(t)))
	case []value:
		b.WriteByte('[')
		for i, x := range t {
			if i > 0 {
				b.WriteString(", ")
			}
			writeValue(b, x)
		}
		b.WriteByte(']')
	case *object:
		b.WriteByte('{')
		for i, k := range t.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			writeString(b, k)
			b.WriteString(": ")
			writeValue(b, t.vals[k])
		}
		b.WriteByte('}')
	}
}

// writeString quotes s as Python's json module does with ensure_ascii=False:
// only '"', '\\' and the control characters below U+0020 are escaped.
func writeString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			if c < utf8.RuneSelf {
				b.WriteByte(c)
				i++
				continue
			}
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				b.WriteString("\ufffd")
			} else {
				b.WriteString(s[i : i+n])
			}
			i += n
			continue
		}
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			fmt.Fprintf(b, `\u%04x`, c)
		}
		i++
	}
	b.WriteByte('"')
}

// formatNumber writes a JSON number literal as Python would after json.loads:
// integers exactly as integers, floats in repr form.
func formatNumber(lit string) string {
	if !strings.ContainsAny(lit, ".eE") {
		var n big.Int
		if _, ok := n.SetString(lit, 10); ok {
			return n.String() // drops a "-0" sign, as Python's int does
		}
		return lit
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && !math.IsInf(f, 0) {
		return lit
	}
	return FormatFloat(f)
}

// FormatFloat returns Python's repr of a float, as json.dumps writes it:
// the shortest digits that round-trip, in positional form when the decimal
// exponent is in [-4, 16), else in scientific form with a signed two-digit
// (or longer) exponent; Infinity, -Infinity and NaN for the special values.
func FormatFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	sign := ""
	if math.Signbit(f) {
		sign = "-"
		f = -f
	}
	if f == 0 {
		return sign + "0.0"
	}
	// Shortest round-trip digits and the decimal exponent.
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddddde±XX
	mant, expStr, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, _ := strconv.Atoi(expStr)
	decpt := exp + 1 // value = 0.digits × 10^decpt
	if decpt > -4 && decpt <= 16 {
		switch {
		case decpt <= 0:
			return sign + "0." + strings.Repeat("0", -decpt) + digits
		case decpt >= len(digits):
			return sign + digits + strings.Repeat("0", decpt-len(digits)) + ".0"
		default:
			return sign + digits[:decpt] + "." + digits[decpt:]
		}
	}
	m := digits[:1]
	if len(digits) > 1 {
		m += "." + digits[1:]
	}
	es := "+"
	if exp < 0 {
		es = "-"
		exp = -exp
	}
	return fmt.Sprintf("%s%se%s%02d", sign, m, es, exp)
}
