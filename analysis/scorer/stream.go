package scorer

import (
	"bufio"
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

// batchLines is how many lines the reader hands a worker at once: enough
// that passing them between goroutines costs little next to scoring them.
const batchLines = 32

// streamBatch is a run of consecutive lines of the input.
type streamBatch struct {
	seq   int      // the batch's place in the input, from 0
	lines []int    // each line's 1-based number
	raws  [][]byte // each line's bytes
}

// batchResult is a scored batch: the output lines up to the first bad line,
// what they count, and that line's error.
type batchResult struct {
	seq   int
	out   []byte
	stats StreamStats
	err   error // a *jsonl.Error naming the input, the line and the field
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
	if err := Check(opts.Scorer); err != nil {
		return StreamStats{}, err
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

	window := make(chan struct{}, 2*workers) // bounds batches in flight
	jobs := make(chan streamBatch, workers)
	results := make(chan batchResult, workers)
	readErr := make(chan error, 1)
	go func() {
		defer close(jobs)
		readErr <- readBatches(ctx, r, name, window, jobs)
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ls := lineScorer{scorer: opts.Scorer}
			for b := range jobs {
				select {
				case results <- ls.scoreBatch(name, b):
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(results) }()

	bw := bufio.NewWriterSize(w, 1<<16)
	stats, firstErr := writeInOrder(bw, results, window, cancel)
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

// readBatches reads the lines of r in batches of batchLines onto jobs, each
// after taking a place in window. The lines read before a read error are
// still sent, so that a bad line among them is reported first.
func readBatches(ctx context.Context, r io.Reader, name string, window chan<- struct{}, jobs chan<- streamBatch) error {
	var b streamBatch
	send := func() error {
		select {
		case window <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		select {
		case jobs <- b:
		case <-ctx.Done():
			return ctx.Err()
		}
		b = streamBatch{seq: b.seq + 1, lines: make([]int, 0, batchLines), raws: make([][]byte, 0, batchLines)}
		return nil
	}
	err := jsonl.Read(r, name, func(line int, raw []byte) error {
		b.lines, b.raws = append(b.lines, line), append(b.raws, raw)
		if len(b.raws) == batchLines {
			return send()
		}
		return nil
	})
	if len(b.raws) > 0 {
		if serr := send(); err == nil {
			err = serr
		}
	}
	return err
}

// writeInOrder writes the scored batches to w in input order, each after
// freeing its place in window, until results closes or a batch holds an
// error; then it cancels the stream and skips what is left.
func writeInOrder(w io.Writer, results <-chan batchResult, window <-chan struct{}, cancel func()) (StreamStats, error) {
	var stats StreamStats
	var firstErr error
	pending := map[int]batchResult{}
	next := 0
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
			if _, err := w.Write(p.out); err != nil {
				firstErr = fmt.Errorf("scorer: write: %w", err)
				cancel()
				break
			}
			stats.Lines += p.stats.Lines
			stats.Positive += p.stats.Positive
			stats.Errors += p.stats.Errors
			if p.err != nil {
				firstErr = fmt.Errorf("scorer: %w", p.err)
				cancel()
				break
			}
		}
	}
	return stats, firstErr
}

// lineScorer scores lines on one goroutine, reusing its memory from line to
// line.
type lineScorer struct {
	scorer string
	obj    jsonl.Ordered // the line being scored
	num    []byte        // its score as JSON
}

// scoreBatch scores the lines of b up to the first bad one; name is the
// input's name for the error.
func (ls *lineScorer) scoreBatch(name string, b streamBatch) batchResult {
	res := batchResult{seq: b.seq}
	size := 0
	for _, raw := range b.raws {
		size += len(raw) + len(`,"score":-1`) + 1
	}
	res.out = make([]byte, 0, size)
	for k, raw := range b.raws {
		out, pos, fail, err := ls.scoreLine(res.out, raw)
		if err != nil {
			var fe *jsonl.FieldError
			if errors.As(err, &fe) {
				res.err = &jsonl.Error{Name: name, Line: b.lines[k], Field: fe.Field, Err: fe.Err}
			} else {
				res.err = &jsonl.Error{Name: name, Line: b.lines[k], Err: err}
			}
			break
		}
		res.out = out
		res.stats.Lines++
		if pos {
			res.stats.Positive++
		}
		if fail {
			res.stats.Errors++
		}
	}
	return res
}

// scoreLine decodes one object, scores it and appends the output line to
// out. pos says the score is positive, fail that the line got "error".
func (ls *lineScorer) scoreLine(out, raw []byte) (_ []byte, pos, fail bool, _ error) {
	obj := &ls.obj
	if err := obj.Parse(raw); err != nil {
		return out, false, false, err
	}
	resp, lab, err := responseAndLabel(obj)
	if err != nil {
		return out, false, false, err
	}
	calls, err := toolCalls(obj, resp)
	if err != nil {
		return out, false, false, err
	}
	obj.Delete("score")
	obj.Delete("error")
	if r, err := ScoreSample(ls.scorer, resp, lab, calls); err != nil {
		fail = true
		obj.SetRaw("error", jsonString(err.Error()))
	} else {
		pos = r.Reward > 0
		ls.num = strconv.AppendFloat(ls.num[:0], r.Reward, 'f', -1, 64)
		obj.SetRaw("score", ls.num)
	}
	return append(obj.AppendTo(out), '\n'), pos, fail, nil
}

// responseAndLabel reads the string "response" and the "label" of one line.
func responseAndLabel(obj *jsonl.Ordered) (string, Label, error) {
	response, ok := obj.Get("response")
	if !ok {
		return "", Label{}, &jsonl.FieldError{Field: "response", Err: errors.New("missing")}
	}
	resp, ok := jsonl.DecodeString(response)
	if !ok { // null reads as "", as json.Unmarshal has it
		if err := json.Unmarshal(response, &resp); err != nil {
			return "", Label{}, &jsonl.FieldError{Field: "response", Err: errors.New("want a string")}
		}
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
	b, _ := jsonl.Marshal(s) // a string always marshals
	return b
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
