package scorer

import "github.com/mathrl/mathrl/internal/boxed"

// ExtractBoxed returns the content of the last \boxed{...} in text, as slime's
// math_utils.extract_answer does, and false where that function returns None.
// It is boxed.Last, whose doc gives the exact rule and its quirks.
func ExtractBoxed(text string) (string, bool) { return boxed.Last(text) }
