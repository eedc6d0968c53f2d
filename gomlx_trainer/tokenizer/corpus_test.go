package tokenizer

import (
	"bufio"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mathrl/mathrl/internal/testenv"
)

// handWritten are strings chosen to hit the pre-tokenizer's alternatives, the
// added tokens and normalization.
var handWritten = []string{
	"", " ", "  ", "\n", "\n\n", " \n", "\n ", "\t", "\t\t x", "a\tb", "   leading", "trailing   ", "trailing\n\n",
	"x  \n  y", "x \n\n \t y", "\r\n", "a\r\nb", "line1\nline2\r\n\r\nline3", " \u00a0x", "\u3000全角", "a\u2028b\u2029c",
	"\v\f", "x\u0085y", "Hello world", "Hello  world", "Hello   world!", "HELLO WORLD", "hello, world.",
	"don't", "DON'T", "I'm", "you're", "we've", "she'll", "he'd", "it's", "'s", "'S", "'Re", "'vE", "'LL'd",
	"rock'n'roll", "'hello'", "''", "'''s", "a's b'S c're", "x'ſ y'ſt", "'ll've",
	"12345", "3.14159", "1,000,000", "x1y2z3", "2^{10}=1024", "-7", "+42", "٣٤٥", "१२३", "Ⅻ ⅻ", "½ ¾", "①②③", "𝟙𝟚",
	"$\\frac{1}{2}$", "$$\\int_0^1 x^2\\,dx = \\frac{1}{3}$$", "\\boxed{42}", "\\sqrt{2}+\\sqrt[3]{x}",
	"\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}", "$a_{n+1} = a_n^2 - 2$", "\\left(\\dfrac{x}{y}\\right)^{-1}",
	"\\{x \\mid x > 0\\}", "\\text{if } n \\equiv 1 \\pmod{4}", "$\\angle ABC = 90^\\circ$", "\\$5.00", "50\\%",
	"def f(x):\n    return x**2\n\nprint(f(3))\n", "import sympy as sp\nx = sp.symbols('x')\nprint(sp.solve(x**2-4, x))",
	"for i in range(10):\n\tif i % 2 == 0:\n\t\tprint(i)", "if (a && b) || !c { return -1; }", "x <= y >= z != w == v",
	"arr[0][1] = {'k': [1, 2, 3]}", "s = \"quoted \\\"string\\\"\"", "# comment\n#!/usr/bin/env python3\n",
	"https://example.com/a?b=c&d=e#f", "user@example.com", "C:\\Users\\x\\file.txt", "~/.bashrc && ls -la | grep x",
	"<html><body class=\"x\">hi</body></html>", "{\"name\": \"code_interpreter\", \"arguments\": {\"code\": \"print(1)\"}}",
	"你好，世界！", "数学题：求解方程 x^2=4。", "日本語のテキストです。カタカナ、ひらがな。", "한국어 텍스트입니다.",
	"Привет, мир!", "Γειά σου Κόσμε", "مرحبا بالعالم", "שלום עולם", "สวัสดีชาวโลก", "नमस्ते दुनिया", "Tiếng Việt có dấu",
	"mixed 中文 and English 123 数字", "😀", "👍🏽", "👨‍👩‍👧‍👦 family", "🇫🇷🇯🇵", "a😀b", "😀😀😀", "❤️", "⭐️✨",
	"e\u0301", "caf\u00e9 cafe\u0301", "A\u030a", "\u1e9b\u0323", "n\u0303o", "\u0301starts with combining",
	"x\u0308\u0301", "\uac00\u11a8", "\u1100\u1161\u11a8", "Å Å Å", "ﬁ ﬂ", "Ⅳ", "ｆｕｌｌｗｉｄｔｈ", "\ufeffbom",
	"<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n", "<|endoftext|>", "<|im_end|><|im_end|>",
	"text<|im_end|>more", "<tool_call>\n{\"name\": \"x\"}\n</tool_call>", "<tool_response>\n42\n</tool_response>",
	"<think>\nhmm\n</think>\n\n", "<tool_ca", "<|im_end", "<|im_", "</tool_call", "<tool_call", "<|endoftext",
	"<<|im_end|>>", "<|im_start|><|im_start|>", "<|fim_prefix|>a<|fim_suffix|>b<|fim_middle|>", "<|vision_pad|>x",
	"a <tool_call> b", " <|im_end|> ", "\n<tool_call>\n", "e\u0301<|im_end|>\u0301", "<|IM_END|>", "< |im_end| >",
	"!!!???...", "---", "===", "***bold***", "    ", "________", "~~~", "…", "—–", "«»", "‹›", "¿¡", "§¶", "©®™",
	"∀x∈ℝ, x²≥0", "α+β=γ", "∑_{i=1}^n i = n(n+1)/2", "∞", "√2", "≈≠≤≥", "→⇒⇔", "∂f/∂x", "ℕℤℚℝℂ",
	strings.Repeat("a", 300), strings.Repeat("ab", 200), strings.Repeat(" ", 100), strings.Repeat("\n", 50),
	strings.Repeat("9", 40), strings.Repeat("中", 200), strings.Repeat("=", 120), strings.Repeat("😀", 30),
	strings.Repeat("x ", 100) + "\n", "Supercalifragilisticexpialidocious", "pneumonoultramicroscopicsilicovolcanoconiosis",
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	"The answer is $\\boxed{\\frac{3}{4}}$.\n\n", "Step 1: Let $x = 5$.\nStep 2: Then $2x = 10$.\n",
	"end with tab\t", "end with cr\r", "\u200b zero width", "a\u200db", "\u00ad soft hyphen", "\x00nul\x01",
	"\x7f del", "tab\tinside\tline", "  \n\t  \n  ", " x", "  x", "   x", " \tx", "\t x", "\n x", " \n x",
}

// mathProblems returns up to n problems and n solutions of the MATH test set.
func mathProblems(t testing.TB, n int) []string {
	dir := testenv.DataDir(t, "math_test.jsonl")
	f, err := os.Open(filepath.Join(dir, "math_test.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for len(out) < 2*n && sc.Scan() {
		var row struct{ Problem, Solution string }
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		out = append(out, row.Problem, row.Solution)
	}
	return out
}

// fuzzAlphabet mixes the character classes the pre-tokenizer and the
// normalizer care about.
var fuzzAlphabet = []string{
	"a", "b", "Z", "é", "ß", "ſ", "x", "s", "t", "re", "ve", "m", "ll", "d", "S", "T", "RE", "LL",
	"0", "7", "٣", "²", "½", "Ⅻ", " ", " ", " ", "  ", "\t", "\n", "\r", "\r\n", "\u00a0", "\u3000", "\u2028", "\u0085", "\v",
	"'", "'", "\"", ".", ",", "!", "?", "-", "_", "(", ")", "{", "}", "[", "]", "\\", "/", "$", "^", "=", "+", "*", "#", "%", "&", "|", "~", "`",
	"中", "文", "日", "本", "한", "Ж", "λ", "ع", "א", "ก", "न", "्", "😀", "👍", "🏽", "\u200d", "\ufe0f", "🇫", "🇷",
	"\u0301", "\u0308", "\u0323", "\u0303", "e\u0301", "A\u030a", "\u1100", "\u1161", "\u11a8",
	"<|im_start|>", "<|im_end|>", "<|endoftext|>", "<tool_call>", "</tool_call>", "<think>", "<|im_end", "<tool_", "<", "|", ">",
	"\\frac", "\\boxed{", "print(", "def ", "    ", "1e-07", "∑", "∞", "≤", "…",
}

// randomText returns a string of n pieces: mostly from fuzzAlphabet, sometimes
// a random code point, sometimes a random byte sequence (invalid UTF-8 included).
func randomText(rng *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		switch k := rng.IntN(20); {
		case k < 15:
			b.WriteString(fuzzAlphabet[rng.IntN(len(fuzzAlphabet))])
		case k < 18:
			r := rune(rng.IntN(0x30000))
			if r >= 0xD800 && r <= 0xDFFF {
				r = 'q'
			}
			b.WriteRune(r)
		case k < 19:
			b.WriteRune(rune(0x300 + rng.IntN(0x70))) // a combining mark
		default:
			b.WriteString(strings.Repeat(fuzzAlphabet[rng.IntN(len(fuzzAlphabet))], 1+rng.IntN(60)))
		}
	}
	return b.String()
}

// fuzzCorpus returns n seeded random strings, all valid UTF-8 (the reference
// receives strings through JSON).
func fuzzCorpus(seed uint64, n int) []string {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([]string, n)
	for i := range out {
		s := randomText(rng, 1+rng.IntN(40))
		if !utf8.ValidString(s) {
			s = strings.ToValidUTF8(s, "\uFFFD")
		}
		out[i] = s
	}
	return out
}
