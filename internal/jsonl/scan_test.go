package jsonl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// fastSeeds are lines that the fast path must take.
var fastSeeds = []string{
	`{}`,
	` { } `,
	`{"response":"Let me see.\n\nSo $\\boxed{\\frac{1}{2}}$.","label":"\\frac12"}`,
	`{"response":"a\u003cb\u003e \u00e9 \ud83d\ude00 \"q\" \/ \b\f\r\t","label":42}`,
	`{"response":"héllo ∑ 😀","label":-0.5e+10,"tool_calls":3}`,
	`{ "n" : 1.0e0 , "s":"\u003c|x|\u003e", "l":[1, 2] ,"o":{"k":[{"\u0041":null}],"t":true,"f":false}}`,
	`{"a":[],"b":{},"c":[[[]]],"d":0,"e":-0,"f":1E5,"g":0.25,"h":""}`,
	"{\"lone surrogate\":\"\\ud800x\\udc00\\ud800\\u0041\",\"bad utf8\":\"\xff\xfe\"}",
	`{"score":7,"error":"old","response":null,"label":[1]}`,
}

// slowSeeds are lines that the fast path leaves to encoding/json: the
// malformed ones, and a few well-formed ones it does not handle.
var slowSeeds = []string{
	`[1,2]`, `null`, `"x"`, `{`, `{"a":1`, `{"a":1,}`, `{"a":1} {}`, `{"a":1}x`, `{"a" 1}`, `{a:1}`,
	`{"a":1,"b":tru}`, `{"a":1,"a":2}`, `{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":1e}`, `{"a":-}`, `{"a":+1}`,
	`{"a":"x\qy"}`, `{"a":"\u12"}`, "{\"a\":\"tab\there\"}", `{"a":[1,]}`, `{"a":{"b"}}`, `{"a":nulll}`,
	`{"a":[1 2]}`, `{"a":"x"` + "\u00a0" + `}`, `{"\u0061":1,"a":2}`, `{"\u0041b":1}`, "{\"\xff\":1}",
	`{"a":` + strings.Repeat("[", maxScanDepth+1) + strings.Repeat("]", maxScanDepth+1) + `}`,
}

// parseBoth parses raw with the fast and the slow path.
func parseBoth(raw []byte) (fast, slow *Ordered, fastOK bool, slowErr error) {
	fast, slow = &Ordered{}, &Ordered{}
	fastOK = fast.scanObject(raw)
	slowErr = slow.parseSlow(raw)
	return fast, slow, fastOK, slowErr
}

// sameFields reports how two parses differ, or "".
func sameFields(a, b *Ordered) string {
	if len(a.keys) != len(b.keys) {
		return fmt.Sprintf("%d fields, %d fields", len(a.keys), len(b.keys))
	}
	for i := range a.keys {
		if !bytes.Equal(a.keys[i], b.keys[i]) || !bytes.Equal(a.rawKeys[i], b.rawKeys[i]) || !bytes.Equal(a.vals[i], b.vals[i]) {
			return fmt.Sprintf("field %d: %q %s %s, %q %s %s", i, a.keys[i], a.rawKeys[i], a.vals[i], b.keys[i], b.rawKeys[i], b.vals[i])
		}
	}
	return ""
}

func TestOrderedFastPath(t *testing.T) {
	for _, in := range fastSeeds {
		fast, slow, ok, err := parseBoth([]byte(in))
		if !ok || err != nil {
			t.Errorf("%q: fast path %v, slow path error %v; want both to accept", in, ok, err)
			continue
		}
		if d := sameFields(fast, slow); d != "" {
			t.Errorf("%q: fast and slow paths differ: %s", in, d)
		}
	}
	for _, in := range slowSeeds {
		if _, _, ok, _ := parseBoth([]byte(in)); ok {
			t.Errorf("%q: the fast path took it, want the slow path", in)
		}
	}
}

// The fast path never accepts a line that encoding/json refuses, and when it
// accepts one it gives the same fields, names and values byte for byte.
func FuzzOrderedFastPath(f *testing.F) {
	for _, s := range append(fastSeeds, slowSeeds...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		fast, slow, ok, err := parseBoth(raw)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("%q: fast path took a line the slow path refuses: %v", raw, err)
		}
		if d := sameFields(fast, slow); d != "" {
			t.Fatalf("%q: fast and slow paths differ: %s", raw, d)
		}
	})
}

func TestOrderedParseReuse(t *testing.T) {
	var o Ordered
	for _, tc := range []struct{ in, want string }{
		{`{"a":1,"b":"x"}`, `{"a":1,"b":"x"}`},
		{`{"c":[1, 2]}`, `{"c":[1, 2]}`},
		{`{"\u0041b":1,"c" : 2}`, `{"\u0041b":1,"c":2}`},
	} {
		if err := o.Parse([]byte(tc.in)); err != nil {
			t.Fatalf("Parse(%s): %v", tc.in, err)
		}
		if got := string(o.AppendTo([]byte("x"))); got != "x"+tc.want {
			t.Errorf("Parse(%s), AppendTo = %s, want x%s", tc.in, got, tc.want)
		}
	}
	if err := o.Parse([]byte(`{"a":1,"a":2}`)); err == nil || len(o.keys) != 0 {
		t.Errorf("Parse of a repeated name: err %v, %d fields left; want an error and none", err, len(o.keys))
	}
}

// stringSeeds are JSON string literals (and near misses) for DecodeString.
var stringSeeds = []string{
	`""`, `"plain"`, `"<|im_end|>"`, `"\u003c|im_end|\u003e"`, `"a\nb\\c\"d\/e\bf\fg\rh\ti"`, `"héllo ∑ 😀"`,
	`"\ud83d\ude00"`, `"\uD83D\uDE00"`, `"\ud83d"`, `"\ud83dx"`, `"\ude00\ud83d"`, `"\ud83d\u0041"`, `"\ud83d\ud83d\ude00"`,
	`"\u0000"`, "\"\xff\xfeok\"", "\"\xed\xa0\x80\"", "\"\xef\xbf\xbd\"", `"\ud83d\`, `"\'"`, `"x\qy"`, `"\u12"`,
	"\"tab\there\"", `"open`, `42`, `null`, ` "padded"`, `"a" `, `"a"b"`, `{"a":1}`,
}

// DecodeString agrees with json.Unmarshal into a string on every JSON string
// literal, and refuses everything else.
func TestDecodeString(t *testing.T) {
	for _, in := range stringSeeds {
		checkDecodeString(t, []byte(in))
	}
}

func FuzzDecodeString(f *testing.F) {
	for _, s := range stringSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkDecodeString(t, raw) })
}

func checkDecodeString(t *testing.T, raw []byte) {
	t.Helper()
	got, ok := DecodeString(raw)
	isString := len(raw) > 0 && raw[0] == '"' && raw[len(raw)-1] == '"' && json.Valid(raw)
	if ok != isString {
		t.Fatalf("DecodeString(%q) ok = %v, want %v", raw, ok, isString)
	}
	if !ok {
		return
	}
	var want string
	if err := json.Unmarshal(raw, &want); err != nil || got != want {
		t.Fatalf("DecodeString(%q) = %q, json.Unmarshal gives %q, %v", raw, got, want, err)
	}
}

func TestQuoteName(t *testing.T) {
	for _, key := range []string{"score", "error", "", "a b", "<|im_end|>&", `q"uote`, `back\slash`, "tab\t", "héllo", "\u2028", "del\x7f", "\xff"} {
		want, _ := Marshal(key)
		if got, _ := quoteName(key); !bytes.Equal(got, want) {
			t.Errorf("quoteName(%q) = %s, want %s", key, got, want)
		}
	}
}

func BenchmarkOrderedParse(b *testing.B) {
	line := []byte(`{"response":"Let me work through the problem step by step.\n\nTherefore, the final answer is $\\boxed{\\frac{1}{2}}$.","label":"\\frac{1}{2}"}`)
	for _, bc := range []struct {
		name  string
		parse func(o *Ordered) error
	}{
		{"fast", func(o *Ordered) error { return o.Parse(line) }},
		{"slow", func(o *Ordered) error { o.reset(); return o.parseSlow(line) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var o Ordered
			var out []byte
			for b.Loop() {
				if err := bc.parse(&o); err != nil {
					b.Fatal(err)
				}
				v, _ := o.Get("response")
				if _, ok := DecodeString(v); !ok {
					b.Fatal("response is not a string")
				}
				out = o.AppendTo(out[:0])
			}
		})
	}
}
