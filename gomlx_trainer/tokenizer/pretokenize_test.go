package tokenizer

// pieces returns the pre-tokenizer's pieces of s in byte-level form, as the
// reference prints them.
func pieces(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		j := pieceEnd(s, i)
		out = append(out, byteLevelString(s[i:j]))
		i = j
	}
	return out
}
