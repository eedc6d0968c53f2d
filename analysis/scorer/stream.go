package scorer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"sync"

	"github.com/mathrl/mathrl/internal/jsonl"
)

// StreamOptions configures ScoreStream.
type StreamOptions struct {
	Scorer  string // scorer name, as for ScoreLabel
	Name    string // input name used in errors ("-" for standard input)
	Workers int    // scoring goroutines; 0 means runtime.GOMAXPROCS(0)
}

// StreamStats counts what ScoreStream wrote.
type StreamStats struct {
	Lines    int // objects written
	Positive int // lines with a positive score
	Errors   int // lines written with "error" instead of "score"
}

type streamJob struct {
	seq, line int
	raw       []byte
}

type streamResult struct {
	seq  int
	out  []byte
	err  error
	pos  bool
	fail bool
}

// ScoreStream reads JSON Lines from r, one object per line with a string
// "response" and a "label" (a string or a number), and writes each object to
// w in input order with every field kept in its order plus "score" (math and
// deepscaler 0 or 1, dapo 1 or -1), or, where the scorer cannot score the line
// (dapo on a non-numeric label), "error" instead of "score". An existing
// "score" or "error" field is replaced. Lines are scored by opts.Workers
// goroutines. A bad line stops the stream with an error naming the input,
// the line and the field; lines before it have been written.
func ScoreStream(ctx context.Context, r io.Reader, w io.Writer, opts StreamOptions) (StreamStats, error) {
	var stats StreamStats
	if err := Check(opts.Scorer); err != nil {
		return stats, err
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	name := opts.Name
	if name == "" {
		name = "-"
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	window := make(chan struct{}, 64*workers) // bounds lines in flight
	jobs := make(chan streamJob, workers)
	results := make(chan streamResult, workers)
	readErr := make(chan error, 1)

	go func() { // reader
		defer close(jobs)
		seq := 0
		readErr <- jsonl.Read(r, name, func(line int, raw []byte) error {
			select {
			case window <- struct{}{}:
			case <-ctx.Done():
				return ctx.Err()
			}
			select {
			case jobs <- streamJob{seq: seq, line: line, raw: raw}:
			case <-ctx.Done():
				return ctx.Err()
			}
			seq++
			return nil
		})
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				res := scoreLine(opts.Scorer, j)
				if res.err != nil {
					var fe *jsonl.FieldError
					if errors.As(res.err, &fe) {
						res.err = &jsonl.Error{Name: name, Line: j.line, Field: fe.Field, Err: fe.Err}
					} else {
						res.err = &jsonl.Error{Name: name, Line: j.line, Err: res.err}
					}
				}
				select {
				case results <- res:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(results) }()

	bw := bufio.NewWriterSize(w, 1<<16)
	pending := map[int]streamResult{}
	next := 0
	var firstErr error
	for res := range results {
		if firstErr != nil {
			continue
		}
		pending[res.seq] = res
		for {
			p, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			<-window
			if p.err != nil {
				firstErr = fmt.Errorf("scorer: %w", p.err)
				cancel()
				break
			}
			if _, err := bw.Write(p.out); err != nil {
				firstErr = fmt.Errorf("scorer: write: %w", err)
				cancel()
				break
			}
			stats.Lines++
			if p.pos {
				stats.Positive++
			}
			if p.fail {
				stats.Errors++
			}
		}
	}
	if err := <-readErr; err != nil && firstErr == nil {
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			err = ctx.Err()
		}
		firstErr = fmt.Errorf("scorer: %w", err)
	}
	if firstErr != nil {
		bw.Flush()
		return stats, firstErr
	}
	if err := bw.Flush(); err != nil {
		return stats, fmt.Errorf("scorer: write: %w", err)
	}
	return stats, nil
}

// scoreLine decodes one object, scores it and renders the output line.
func scoreLine(scorer string, j streamJob) streamResult {
	res := streamResult{seq: j.seq}
	obj, err := jsonl.ParseOrdered(j.raw)
	if err != nil {
		res.err = err
		return res
	}
	resp, lab, err := responseAndLabel(obj)
	if err != nil {
		res.err = err
		return res
	}
	calls, err := toolCalls(obj, resp)
	if err != nil {
		res.err = err
		return res
	}
	obj.Delete("score")
	obj.Delete("error")
	if r, err := ScoreSample(scorer, resp, lab, calls); err != nil {
		res.fail = true
		obj.SetRaw("error", jsonString(err.Error()))
	} else {
		res.pos = r.Reward > 0
		obj.SetRaw("score", json.RawMessage(strconv.FormatFloat(r.Reward, 'f', -1, 64)))
	}
	res.out = append(obj.Bytes(), '\n')
	return res
}

// responseAndLabel reads the string "response" and the "label" of one line.
func responseAndLabel(obj *jsonl.Ordered) (string, Label, error) {
	response, ok := obj.Get("response")
	if !ok {
		return "", Label{}, &jsonl.FieldError{Field: "response", Err: errors.New("missing")}
	}
	var resp string
	if err := json.Unmarshal(response, &resp); err != nil {
		return "", Label{}, &jsonl.FieldError{Field: "response", Err: errors.New("want a string")}
	}
	label, ok := obj.Get("label")
	if !ok {
		return "", Label{}, &jsonl.FieldError{Field: "label", Err: errors.New("missing")}
	}
	lab, err := LabelFromJSON(label)
	if err != nil {
		return "", Label{}, &jsonl.FieldError{Field: "label", Err: errors.New("want a string or a number")}
	}
	return resp, lab, nil
}

// toolCalls reads the line's "tool_calls" (as eval-samples files have it);
// without one, it counts the response's <tool_call> blocks.
func toolCalls(obj *jsonl.Ordered, response string) (int, error) {
	raw, ok := obj.Get("tool_calls")
	if !ok {
		return CountToolCalls(response), nil
	}
	var n int
	if err := json.Unmarshal(raw, &n); err != nil || n < 0 {
		return 0, &jsonl.FieldError{Field: "tool_calls", Err: errors.New("want a non-negative integer")}
	}
	return n, nil
}

// jsonString returns s as a JSON string, without HTML escaping.
func jsonString(s string) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// ScoreFiles runs ScoreStream from files.In to files.Out (see jsonl.Files:
// "-" stands for files.Stdin or files.Stdout). An output file is written
// atomically: on any error no file is left and an existing one is untouched.
func ScoreFiles(ctx context.Context, files jsonl.Files, opts StreamOptions) (StreamStats, error) {
	if err := Check(opts.Scorer); err != nil {
		return StreamStats{}, err
	}
	var stats StreamStats
	err := files.Run(func(r io.Reader, name string, w io.Writer) error {
		opts.Name = name
		var err error
		stats, err = ScoreStream(ctx, r, w, opts)
		return err
	})
	return stats, err
}
