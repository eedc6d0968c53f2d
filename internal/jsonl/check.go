package jsonl

import (
	"errors"
	"fmt"
	"strings"
)

// CheckError returns nil when err is what a reader of text, the stream called
// name, must give for a bad line: an *Error for name at a line of text (1 to
// the number of lines), whose message starts prefix + "NAME:LINE: ". Otherwise
// it says what is wrong. Reader tests, fuzz tests above all, call it.
func CheckError(err error, prefix, name, text string) error {
	var je *Error
	if !errors.As(err, &je) {
		return fmt.Errorf("error %v is not a *jsonl.Error", err)
	}
	if lines := strings.Count(text, "\n") + 1; je.Name != name || je.Line < 1 || je.Line > lines {
		return fmt.Errorf("error %v names %s:%d, want %s and a line in 1..%d", err, je.Name, je.Line, name, lines)
	}
	if want := fmt.Sprintf("%s%s:%d: ", prefix, name, je.Line); !strings.HasPrefix(err.Error(), want) {
		return fmt.Errorf("error %q does not start with %q", err, want)
	}
	return nil
}
