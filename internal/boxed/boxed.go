// Package boxed finds the last \boxed{...} of a text the way slime's
// math_utils does. Dataset labels (package data) and the scorers (package
// analysis/scorer) both use it, so a label and a graded answer are cut out of
// their text by the same rule.
package boxed

import "strings"

// Last returns the content of the last \boxed{...} in text, as slime's
// math_utils.extract_answer (last_boxed_only_string, then remove_boxed) does,
// and false where that function returns None.
//
// It finds the last occurrence of the plain substring `\boxed` (so `\boxed 42`
// or the word \boxed in prose count as the last box), walks forward counting
// every `{` and `}` (escaped braces too) and stops at the first `}` that brings
// the count back to zero. The candidate must then start with `\boxed{`. A
// malformed last box therefore hides an earlier good one, `\fbox` is never
// accepted and `\boxed{}` gives ("", true).
func Last(text string) (string, bool) {
	idx := strings.LastIndex(text, `\boxed`)
	if idx < 0 {
		return "", false
	}
	depth := 0
	for i := idx; i < len(text); i++ {
		switch text[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				box := text[idx : i+1]
				if !strings.HasPrefix(box, `\boxed{`) {
					return "", false
				}
				return box[len(`\boxed{`) : len(box)-1], true
			}
		}
	}
	return "", false
}
