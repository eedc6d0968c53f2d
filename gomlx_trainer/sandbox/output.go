package sandbox

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// capped keeps the first and the last bytes of a stream, at most max in all,
// and counts what it dropped in between. It is not safe for concurrent use.
type capped struct {
	max     int
	head    []byte
	tail    []byte // ring buffer of the last max-len(head) bytes once head is full
	start   int    // index of the oldest byte in tail when tail is full
	dropped int64
}

func newCapped(max int) *capped { return &capped{max: max} }

// Write keeps max/2 bytes of head, then the most recent max-max/2 bytes.
func (c *capped) Write(p []byte) (int, error) {
	n := len(p)
	headMax := c.max / 2
	if room := headMax - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	tailMax := c.max - headMax
	for len(p) > 0 {
		if len(c.tail) < tailMax {
			k := min(tailMax-len(c.tail), len(p))
			c.tail = append(c.tail, p[:k]...)
			p = p[k:]
			continue
		}
		// Full ring: only the last tailMax bytes of p can survive.
		if len(p) > tailMax {
			c.dropped += int64(len(p) - tailMax)
			p = p[len(p)-tailMax:]
		}
		for _, b := range p {
			c.tail[c.start] = b
			c.start = (c.start + 1) % tailMax
			c.dropped++
		}
		p = nil
	}
	return n, nil
}

// String returns the kept text as valid UTF-8, with a marker where bytes were
// dropped, and whether anything was dropped.
func (c *capped) String() (string, bool) {
	tail := append(append([]byte(nil), c.tail[c.start:]...), c.tail[:c.start]...)
	if c.dropped == 0 {
		return validUTF8(string(c.head) + string(tail)), false
	}
	// Cut whole characters: skip continuation bytes at the start of the tail.
	dropped := c.dropped
	for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
		tail = tail[1:]
		dropped++
	}
	return validUTF8(string(c.head)) + cutMarker(dropped, "bytes") + validUTF8(string(tail)), true
}

// cutMarker is the line put where output was cut.
func cutMarker(n int64, unit string) string {
	return fmt.Sprintf("\n[... %d %s cut ...]\n", n, unit)
}

// validUTF8 replaces each invalid byte sequence with U+FFFD.
func validUTF8(s string) string {
	return strings.ToValidUTF8(s, "\uFFFD")
}

// headTail shortens s to at most max characters, keeping its start and end
// around a cut marker.
func headTail(s string, max int) string {
	n := utf8.RuneCountInString(s)
	if n <= max {
		return s
	}
	r := []rune(s)
	marker := cutMarker(0, "characters")
	keep := max - utf8.RuneCountInString(marker) - 4 // room for larger counts
	if keep < 2 {
		keep = 2
	}
	head := keep / 2
	tail := keep - head
	return string(r[:head]) + cutMarker(int64(n-head-tail), "characters") + string(r[n-tail:])
}
