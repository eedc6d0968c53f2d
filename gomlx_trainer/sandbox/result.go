package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Result is what one program did.
type Result struct {
	Stdout          string        // standard output, valid UTF-8, cut in the middle past Config.MaxOutput bytes
	Stderr          string        // standard error, likewise
	ExitCode        int           // exit status; -1 when a signal ended the program
	Signal          string        // the signal that ended the program ("SIGKILL"), if any
	TimedOut        bool          // the wall-clock timeout (or the caller's context) ended the program
	Killed          bool          // a signal ended the program: timeout, CPU limit, file size limit, a crash
	Limit           string        // the limit that ended the program, when known: "timeout", "cpu", "file_size", "canceled"
	StdoutTruncated bool          // Stdout was cut
	StderrTruncated bool          // Stderr was cut
	Duration        time.Duration // wall clock from start to exit
	Isolation       Isolation     // the isolation the program ran under
	UID             int           // the host uid the program ran as
	Limits          Limits        // the limits it ran under

	maxResponse int
	timeout     time.Duration
}

// Limits are the resource limits a program ran under.
type Limits struct {
	TimeoutSeconds float64 `json:"timeout_s"`
	CPUSeconds     int     `json:"cpu_s"`
	Memory         int64   `json:"memory"`
	FileSize       int64   `json:"file_size"`
	Disk           int64   `json:"disk,omitempty"`
	Processes      int     `json:"processes"`
	OpenFiles      int     `json:"open_files"`
}

// resultJSON is the JSON form of Result (durations in seconds).
type resultJSON struct {
	Stdout          string    `json:"stdout"`
	Stderr          string    `json:"stderr"`
	ExitCode        int       `json:"exit_code"`
	Signal          string    `json:"signal,omitempty"`
	TimedOut        bool      `json:"timed_out"`
	Killed          bool      `json:"killed"`
	Limit           string    `json:"limit,omitempty"`
	StdoutTruncated bool      `json:"stdout_truncated"`
	StderrTruncated bool      `json:"stderr_truncated"`
	DurationSeconds float64   `json:"duration_s"`
	Isolation       Isolation `json:"isolation"`
	UID             int       `json:"uid"`
	Limits          Limits    `json:"limits"`
	ToolResponse    string    `json:"tool_response"`
}

// MarshalJSON writes the result with its duration in seconds and its ToolResponse.
func (r Result) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // tracebacks are full of <module>
	err := enc.Encode(resultJSON{
		Stdout: r.Stdout, Stderr: r.Stderr, ExitCode: r.ExitCode, Signal: r.Signal,
		TimedOut: r.TimedOut, Killed: r.Killed, Limit: r.Limit,
		StdoutTruncated: r.StdoutTruncated, StderrTruncated: r.StderrTruncated,
		DurationSeconds: r.Duration.Seconds(), Isolation: r.Isolation, UID: r.UID, Limits: r.Limits,
		ToolResponse: r.ToolResponse(),
	})
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), err
}

// ToolResponse is the text the model sees as the tool's answer:
//
//	<stdout>
//	[stderr]
//	<stderr>
//	[exit status 1]
//
// Stdout comes first as printed. Stderr follows under a "[stderr]" line when
// the program wrote any (Python's tracebacks land here). One closing line in
// brackets says how the program ended when it did not exit with status 0:
// "[exit status N]", "[timed out after 10s: killed]", "[killed: CPU limit of
// 10 s reached]", "[killed: file size limit of N bytes reached]" or "[killed by
// SIGSEGV]". A program that printed nothing and exited 0 gives "[no output]".
// Streams cut by Config.MaxOutput keep a "[... N bytes cut ...]" line, and the
// whole text is cut to Config.MaxResponse characters, keeping its start and its
// end around a "[... N characters cut ...]" line.
func (r Result) ToolResponse() string {
	var b strings.Builder
	b.WriteString(r.Stdout)
	if r.Stderr != "" {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.WriteString("[stderr]\n")
		b.WriteString(r.Stderr)
	}
	if end := r.ending(); end != "" {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.WriteString(end)
	}
	if b.Len() == 0 {
		b.WriteString("[no output]")
	}
	max := r.maxResponse
	if max == 0 {
		max = Default().MaxResponse
	}
	return headTail(b.String(), max)
}

// ending is the bracketed line that says how the program ended, or "" for exit 0.
func (r Result) ending() string {
	switch {
	case r.TimedOut && r.Limit == "canceled":
		return "[canceled: killed]"
	case r.TimedOut:
		return fmt.Sprintf("[timed out after %v: killed]", r.timeout)
	case r.Limit == "cpu":
		return fmt.Sprintf("[killed: CPU limit of %d s reached]", r.Limits.CPUSeconds)
	case r.Limit == "file_size":
		return fmt.Sprintf("[killed: file size limit of %d bytes reached]", r.Limits.FileSize)
	case r.Killed:
		return fmt.Sprintf("[killed by %s]", r.Signal)
	case r.ExitCode != 0:
		return fmt.Sprintf("[exit status %d]", r.ExitCode)
	}
	return ""
}
