package latextext

// Unicode "Mathematical Alphanumeric Symbols" (U+1D400 block): the first
// capital and first small letter of each style, and the letters that live
// elsewhere because Unicode had them before (the chart's "holes").
var mathStyleOffsets = map[string][2]rune{
	"bold":             {0x1D400, 0x1D41A},
	"italic":           {0x1D434, 0x1D44E},
	"bold-italic":      {0x1D468, 0x1D482},
	"script":           {0x1D49C, 0x1D4B6},
	"bold-script":      {0x1D4D0, 0x1D4EA},
	"fraktur":          {0x1D504, 0x1D51E},
	"doublestruck":     {0x1D538, 0x1D552},
	"bold-fraktur":     {0x1D56C, 0x1D586},
	"sans":             {0x1D5A0, 0x1D5BA},
	"sans-bold":        {0x1D5D4, 0x1D5EE},
	"sans-italic":      {0x1D608, 0x1D622},
	"sans-bold-italic": {0x1D63C, 0x1D656},
	"monospace":        {0x1D670, 0x1D68A},
}

var mathStyleHoles = map[string]map[rune]rune{
	"italic":       {'h': 0x210E},
	"script":       {'B': 0x212C, 'E': 0x2130, 'F': 0x2131, 'H': 0x210B, 'I': 0x2110, 'L': 0x2112, 'M': 0x2133, 'R': 0x211B, 'e': 0x212F, 'g': 0x210A, 'o': 0x2134},
	"fraktur":      {'C': 0x212D, 'H': 0x210C, 'I': 0x2111, 'R': 0x211C, 'Z': 0x2128},
	"doublestruck": {'C': 0x2102, 'H': 0x210D, 'N': 0x2115, 'P': 0x2119, 'Q': 0x211A, 'R': 0x211D, 'Z': 0x2124},
}

// mathStyle writes the ASCII letters of s in the given math alphabet (\mathbf,
// \mathbb, ...); other characters are kept.
func mathStyle(s, style string) string {
	off, ok := mathStyleOffsets[style]
	if !ok {
		off = [2]rune{'A', 'a'}
	}
	out := []rune(s)
	for i, r := range out {
		if h, ok := mathStyleHoles[style][r]; ok {
			out[i] = h
			continue
		}
		switch {
		case r >= 'A' && r <= 'Z':
			out[i] = off[0] + r - 'A'
		case r >= 'a' && r <= 'z':
			out[i] = off[1] + r - 'a'
		}
	}
	return string(out)
}
