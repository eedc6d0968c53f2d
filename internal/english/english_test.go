package english

import "testing"

// TestOr: none, one, two and three words.
func TestOr(t *testing.T) {
	for _, tc := range []struct {
		words []string
		want  string
	}{{nil, ""}, {[]string{"a"}, "a"}, {[]string{"a", "b"}, "a or b"}, {[]string{"a", "b", "c"}, "a, b or c"}} {
		if got := Or(tc.words); got != tc.want {
			t.Errorf("Or(%q) = %q, want %q", tc.words, got, tc.want)
		}
	}
}
