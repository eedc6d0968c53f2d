package scorer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"sync"

	"github.com/mathrl/mathrl/internal/atomicfile"
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
	keys, vals, err := orderedObject(j.raw)
	if err != nil {
		res.err = err
		return res
	}
	var response, label json.RawMessage
	for i, k := range keys {
		switch k {
		case "response":
			response = vals[i]
		case "label":
			label = vals[i]
		}
	}
	if response == nil {
		res.err = &jsonl.FieldError{Field: "response", Err: errors.New("missing")}
		return res
	}
	var resp string
	if err := json.Unmarshal(response, &resp); err != nil {
		res.err = &jsonl.FieldError{Field: "response", Err: errors.New("want a string")}
		return res
	}
	if label == nil {
		res.err = &jsonl.FieldError{Field: "label", Err: errors.New("missing")}
		return res
	}
	lab, err := LabelFromJSON(label)
	if err != nil {
		res.err = &jsonl.FieldError{Field: "label", Err: errors.New("want a string or a number")}
		return res
	}
	var out bytes.Buffer
	out.WriteByte('{')
	for i, k := range keys {
		if k == "score" || k == "error" {
			continue
		}
		writeJSONString(&out, k)
		out.WriteByte(':')
		out.Write(vals[i])
		out.WriteByte(',')
	}
	r, err := ScoreLabel(scorer, resp, lab)
	if err != nil {
		res.fail = true
		out.WriteString(`"error":`)
		writeJSONString(&out, err.Error())
	} else {
		res.pos = r.Reward > 0
		out.WriteString(`"score":`)
		out.WriteString(strconv.FormatFloat(r.Reward, 'f', -1, 64))
	}
	out.WriteString("}\n")
	res.out = out.Bytes()
	return res
}

// orderedObject splits one JSON object into its keys and raw values, in order.
func orderedObject(raw []byte) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, errors.New("not a JSON object")
	}
	var keys []string
	var vals []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, fmt.Errorf("not a JSON object: %w", err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, nil, errors.New("not a JSON object")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, &jsonl.FieldError{Field: key, Err: fmt.Errorf("bad JSON value: %w", err)}
		}
		keys = append(keys, key)
		vals = append(vals, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, errors.New("extra data after the JSON object")
	}
	return keys, vals, nil
}

func writeJSONString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	b.Truncate(b.Len() - 1) // Encode's newline
}

// ScoreFiles runs ScoreStream from the file in (or standard input for "" or
// "-") to the file out (or standard output for "" or "-"). An output file is
// written atomically: on any error it is left as it was.
func ScoreFiles(ctx context.Context, in, out string, opts StreamOptions) (StreamStats, error) {
	if err := Check(opts.Scorer); err != nil {
		return StreamStats{}, err
	}
	var r io.Reader = os.Stdin
	opts.Name = "-"
	if in != "" && in != "-" {
		f, err := os.Open(in)
		if err != nil {
			return StreamStats{}, fmt.Errorf("scorer: %w", err)
		}
		defer f.Close()
		r, opts.Name = f, in
	}
	if out == "" || out == "-" {
		return ScoreStream(ctx, r, os.Stdout, opts)
	}
	var stats StreamStats
	err := atomicfile.Write(out, func(w io.Writer) error {
		var err error
		stats, err = ScoreStream(ctx, r, w, opts)
		return err
	})
	return stats, err
}
