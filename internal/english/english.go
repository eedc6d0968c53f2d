// Package english writes lists as error messages say them.
package english

import "strings"

// Or joins words as "a, b or c" ("a" alone, "" for none).
func Or(words []string) string {
	if n := len(words); n > 1 {
		return strings.Join(words[:n-1], ", ") + " or " + words[n-1]
	}
	return strings.Join(words, "")
}
