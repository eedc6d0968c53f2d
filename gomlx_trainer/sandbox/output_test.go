package sandbox

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestCappedMatchesReference writes random chunks and compares the kept text
// with the head and tail cut from the whole stream.
func TestCappedMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		max := 64 + rng.IntN(200)
		c := newCapped(max)
		var all strings.Builder
		for range rng.IntN(40) {
			chunk := make([]byte, rng.IntN(3*max))
			for i := range chunk {
				chunk[i] = 'a' + byte(rng.IntN(26))
			}
			c.Write(chunk)
			all.Write(chunk)
		}
		s := all.String()
		want, wantCut := s, false
		if len(s) > max {
			h := max / 2
			want = s[:h] + fmt.Sprintf("\n[... %d bytes cut ...]\n", len(s)-max) + s[len(s)-(max-h):]
			wantCut = true
		}
		if got, cut := c.String(); got != want || cut != wantCut {
			t.Fatalf("trial %d (max %d, %d bytes): got %q, %v; want %q, %v", trial, max, len(s), got, cut, want, wantCut)
		}
	}
}

func TestCappedKeepsUTF8(t *testing.T) {
	c := newCapped(64)
	s := strings.Repeat("é", 100) // 2 bytes each: the cut falls inside characters
	c.Write([]byte(s))
	got, cut := c.String()
	if !cut || !utf8.ValidString(got) {
		t.Fatalf("got %q (cut %v): want valid UTF-8 with a cut", got, cut)
	}
	head, tail, _ := strings.Cut(got, "\n[... ")
	if strings.Trim(head, "é") != "" {
		t.Errorf("head %q has more than whole characters", head)
	}
	if _, tail, ok := strings.Cut(tail, " ...]\n"); !ok || strings.Trim(tail, "é") != "" {
		t.Errorf("tail %q has more than whole characters", tail)
	}
}

func TestToolResponse(t *testing.T) {
	lim := Limits{CPUSeconds: 5, FileSize: 1000}
	for _, tc := range []struct {
		name string
		r    Result
		want string
	}{
		{"stdout only", Result{Stdout: "4\n"}, "4\n"},
		{"no output", Result{}, "[no output]"},
		{"error", Result{Stdout: "a", Stderr: "Traceback\nValueError: x\n", ExitCode: 1},
			"a\n[stderr]\nTraceback\nValueError: x\n[exit status 1]"},
		{"timeout", Result{Stdout: "before\n", TimedOut: true, Killed: true, Signal: "SIGKILL", Limit: "timeout", ExitCode: -1, timeout: 3 * time.Second},
			"before\n[timed out after 3s: killed]"},
		{"cpu", Result{Killed: true, Signal: "SIGKILL", Limit: "cpu", ExitCode: -1, Limits: lim}, "[killed: CPU limit of 5 s reached]"},
		{"crash", Result{Killed: true, Signal: "SIGSEGV", ExitCode: -1}, "[killed by SIGSEGV]"},
		{"canceled", Result{TimedOut: true, Limit: "canceled", Killed: true}, "[canceled: killed]"},
		// 100 characters: the marker takes 28 plus 4 for a longer count, leaving 34 + 34 of the text.
		{"cut", Result{Stdout: strings.Repeat("x", 100) + strings.Repeat("y", 100), maxResponse: 100},
			strings.Repeat("x", 34) + "\n[... 132 characters cut ...]\n" + strings.Repeat("y", 34)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.r.ToolResponse(); got != tc.want {
				t.Errorf("ToolResponse() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestHeadTailLength(t *testing.T) {
	for max := 64; max < 300; max += 7 {
		for n := 0; n < 1000; n += 37 {
			s := strings.Repeat("ü", n)
			got := headTail(s, max)
			if c := utf8.RuneCountInString(got); c > max {
				t.Fatalf("headTail(%d chars, %d) has %d characters", n, max, c)
			}
			if n <= max && got != s {
				t.Fatalf("headTail(%d chars, %d) changed a short text", n, max)
			}
		}
	}
}
