package scorer

import (
	"encoding/json"
	"math"
	"os/exec"
	"strings"
	"testing"
	"unicode"

	"github.com/mathrl/mathrl/internal/testenv"
)

// pyFloatCases are inputs to Python's float(); want is what CPython 3.11 gives
// ("error" where it raises ValueError).
var pyFloatCases = []struct {
	in   string
	want string
}{
	{"42", "42.0"}, {" 5 ", "5.0"}, {"+5", "5.0"}, {"-0", "-0.0"}, {"025", "25.0"},
	{"1_000", "1000.0"}, {"1_000.000_1", "1000.0001"}, {"1e1_0", "10000000000.0"},
	{"1__000", "error"}, {"_1", "error"}, {"1_", "error"}, {"1_.5", "error"}, {"1._5", "error"},
	{"1e3", "1000.0"}, {"1E-2", "0.01"}, {"1e", "error"}, {"e5", "error"}, {".5", "0.5"}, {"5.", "5.0"}, {".", "error"},
	{"inf", "inf"}, {"-Infinity", "-inf"}, {"nAn", "nan"}, {"+nan", "nan"}, {"infinit", "error"},
	{"1e400", "inf"}, {"1e-400", "0.0"}, {"0x10", "error"}, {"1/2", "error"}, {`\frac12`, "error"},
	{"(1,2)", "error"}, {"", "error"}, {"   ", "error"}, {"1,000", "error"}, {"1 000", "error"},
	{"١٢٣", "123.0"}, {"\u00a05\u2003", "5.0"}, {"\x1c5", "error"}, {"5\n", "5.0"}, {"²", "error"},
	{"１２", "12.0"}, {"12.5e+1", "125.0"}, {"- 5", "error"}, {"--5", "error"},
}

func pyFloatString(s string) string {
	x, ok := pyFloat(s)
	if !ok {
		return "error"
	}
	return pyFloatRepr(x)
}

func TestPyFloat(t *testing.T) {
	for _, tc := range pyFloatCases {
		if got := pyFloatString(tc.in); got != tc.want {
			t.Errorf("float(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestPythonSemantics compares the Python emulation with Debian's CPython on
// many inputs: float(), repr(float), str.strip, str.lower, str.isdigit,
// int-of-float and the canonical int check used by _fix_a_slash_b.
func TestPythonSemantics(t *testing.T) {
	py := testenv.DebianPython(t)
	var inputs []string
	for _, tc := range pyFloatCases {
		inputs = append(inputs, tc.in)
	}
	inputs = append(inputs, "ΑΣ", "ΑΣ Β", "Σ", "aΣ.", "İstanbul", "ǅ", "Ⅻ", "ΣΑΣ", "x\u1680", "\u0085x\u0085",
		"12", "①", "²³", "1,000", "0012", "-0", "-12", "+3", "1e22", "123456789012345678", "0.1", "1e16", "1e15",
		"0.0001", "0.00001", "-2.5e-7", "3.14159", "9007199254740993", "1e308", "4.9e-324", "5e-324")
	inputs = append(inputs, strings.Repeat("7", pyMaxIntDigits), strings.Repeat("7", pyMaxIntDigits+1))
	for r := rune(0x660); r < 0x670; r++ {
		inputs = append(inputs, string(r)+"5")
	}
	script := `
import sys, json
def f(s):
    try:
        return repr(float(s))
    except ValueError:
        return "error"
def intof(s):
    try:
        x = float(s)
        return str(int(x))
    except (ValueError, OverflowError):
        return "error"
def canon(s):
    try:
        return s == str(int(s))
    except ValueError:
        return False
out = []
for s in json.load(sys.stdin):
    out.append([f(s), s.strip(), s.lower(), s.isdigit(), intof(s), canon(s)])
json.dump(out, sys.stdout)
`
	cmd := exec.Command(py, "-c", script)
	in, _ := json.Marshal(inputs)
	cmd.Stdin = strings.NewReader(string(in))
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v", err)
	}
	var want [][]any
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	for i, s := range inputs {
		w := want[i]
		if got := pyFloatString(s); got != w[0] {
			t.Errorf("float(%q): got %s, python %s", s, got, w[0])
		}
		if got := pyStrip(s); got != w[1] {
			t.Errorf("%q.strip(): got %q, python %q", s, got, w[1])
		}
		if got := pyLower(s); got != w[2] {
			t.Errorf("%q.lower(): got %q, python %q", s, got, w[2])
		}
		if got := pyIsDigits(s); got != w[3] {
			t.Errorf("%q.isdigit(): got %v, python %v", s, got, w[3])
		}
		gotInt := "error"
		if x, ok := pyFloat(s); ok && !math.IsInf(x, 0) && !math.IsNaN(x) {
			gotInt = pyIntString(x)
		}
		if gotInt != w[4] {
			t.Errorf("str(int(float(%q))): got %s, python %s", s, gotInt, w[4])
		}
		if got := canonicalInt(s); got != w[5] {
			t.Errorf("%q == str(int(%q)): got %v, python %v", s, s, got, w[5])
		}
	}
}

// TestUnicodeDigits checks decimalValue and isdigit against CPython for every
// code point CPython's Unicode database knows; the digits it does not assign
// yet are a newer Unicode version's, counted apart.
func TestUnicodeDigits(t *testing.T) {
	py := testenv.DebianPython(t)
	script := `
import sys, json, unicodedata
dec = {}
dig = []
unassigned = []
for c in range(sys.maxunicode + 1):
    ch = chr(c)
    if ch.isdecimal():
        dec[c] = unicodedata.decimal(ch)
    elif ch.isdigit():
        dig.append(c)
    elif unicodedata.category(ch) == "Cn":
        unassigned.append(c)
json.dump({"dec": dec, "dig": dig, "unassigned": unassigned, "version": unicodedata.unidata_version}, sys.stdout)
`
	raw, err := exec.Command(py, "-c", script).Output()
	if err != nil {
		t.Fatalf("python: %v", err)
	}
	var ref struct {
		Dec        map[rune]int
		Dig        []rune
		Unassigned []rune
		Version    string
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	for r, d := range ref.Dec {
		if got := decimalValue(r); got != d {
			t.Errorf("decimalValue(%U) = %d, python %d", r, got, d)
		}
	}
	// Go's tables may be of a newer Unicode version than CPython's: a digit
	// that CPython's database does not assign yet (Kawi U+11F50.. in 15.0,
	// Garay U+10D40.. in 16.0, ...) is a decimal as a newer Python reads it.
	unassigned := map[rune]bool{}
	for _, r := range ref.Unassigned {
		unassigned[r] = true
	}
	newer := 0
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if _, known := ref.Dec[r]; !known && decimalValue(r) >= 0 {
			if unassigned[r] {
				newer++
				continue
			}
			t.Errorf("decimalValue(%U) = %d, python: not a decimal", r, decimalValue(r))
		}
	}
	t.Logf("Unicode %s in Go, %s in python: %d decimal digits newer than python's", unicode.Version, ref.Version, newer)
	for _, r := range ref.Dig {
		if !isDigitNotDecimal(r) {
			t.Errorf("%U: python isdigit, not in digitNotDecimal", r)
		}
	}
}

func TestPyFloatRepr(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		want string
	}{
		{42, "42.0"}, {0, "0.0"}, {math.Copysign(0, -1), "-0.0"}, {0.1, "0.1"}, {1e16, "1e+16"},
		{1e15, "1000000000000000.0"}, {1e-5, "1e-05"}, {0.0001, "0.0001"}, {1.5e300, "1.5e+300"},
		{-2.5, "-2.5"}, {123456.789, "123456.789"}, {math.Inf(1), "inf"},
	} {
		if got := pyFloatRepr(tc.x); got != tc.want {
			t.Errorf("repr(%v) = %s, want %s", tc.x, got, tc.want)
		}
	}
}
