package boxed

import "testing"

// The expected values are worked out by hand from slime's last_boxed_only_string
// and remove_boxed.
func TestLast(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
		ok               bool
	}{
		{"plain", `so \boxed{42}.`, "42", true},
		{"nested braces", `$\boxed{\frac{1}{2}}$`, `\frac{1}{2}`, true},
		{"last of two", `\boxed{1} or rather \boxed{2}`, "2", true},
		{"escaped braces count too", `\boxed{\{a\}}`, `\{a\}`, true},
		{"empty box", `\boxed{}`, "", true},
		{"no braces hides an earlier box", `\boxed{1} so \boxed 2`, "", false},
		{"fbox is not a box", `\fbox{3}`, "", false},
		{"unclosed", `\boxed{1`, "", false},
		{"no box", "the answer is 3", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Last(tc.text)
			if got != tc.want || ok != tc.ok {
				t.Errorf("Last(%q) = %q, %v; want %q, %v", tc.text, got, ok, tc.want, tc.ok)
			}
		})
	}
}
