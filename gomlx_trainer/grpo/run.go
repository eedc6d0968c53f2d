package grpo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/gobackend"

	"github.com/mathrl/mathrl/analysis/metrics"
	"github.com/mathrl/mathrl/analysis/plots"
	"github.com/mathrl/mathrl/analysis/runs"
	"github.com/mathrl/mathrl/gomlx_trainer/backend"
	"github.com/mathrl/mathrl/internal/atomicfile"
	"github.com/mathrl/mathrl/internal/jsonl"
	"github.com/mathrl/mathrl/internal/vcs"
)

// RunFolder is one run's folder, laid out as package runs names it
// (runs.ConfigFile and the rest): the trainer writes it, the analyses read
// it. Rollout records go to rollouts/ every save_rollouts_every rollouts;
// figures are named after the folder.
type RunFolder string

// Abs is the folder as an absolute path, for messages; the folder as given
// when it has none.
func (r RunFolder) Abs() string {
	abs, err := filepath.Abs(string(r))
	if err != nil {
		return string(r)
	}
	return abs
}

// CkptDir is the checkpoint folder.
func (r RunFolder) CkptDir() string { return filepath.Join(string(r), runs.CkptDir) }

// SamplesDir is the eval samples folder.
func (r RunFolder) SamplesDir() string { return filepath.Join(string(r), runs.SamplesDir) }

// WeightsDir is where a run whose rollout engine samples on servers writes
// the policy for them to load, unless weights_dir says otherwise.
func (r RunFolder) WeightsDir() string { return filepath.Join(string(r), runs.WeightsDir) }

// FiguresDir is the figures folder.
func (r RunFolder) FiguresDir() string { return filepath.Join(string(r), runs.FiguresDir) }

// provenanceOf fills in what the trainer knows of p.
func provenanceOf(p metrics.Provenance, cfg Config, b compute.Backend, isolation string) metrics.Provenance {
	p.Started = time.Now().UTC().Format(time.RFC3339)
	stamp := vcs.Current()
	p.GitCommit, p.GitDirty, p.GitSource = stamp.Commit, stamp.Dirty, stamp.Source
	p.GoVersion = runtime.Version()
	p.Modules = map[string]string{}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			p.Modules[m.Path] = m.Version
		}
	}
	if b != nil {
		p.Backend, p.Device = b.String(), backend.Describe(b)
		if p.Backend == gobackend.BackendName {
			p.Kernels = backend.GoKernels()
		}
	}
	p.Scorer, p.Seed, p.Sandbox = cfg.RMType, cfg.Seed, isolation
	p.Host = fmt.Sprint(runtime.NumCPU())
	return p
}

// Init creates the folder and writes config.json and provenance.json.
func (r RunFolder) Init(cfg Config, prov metrics.Provenance) error {
	for _, d := range []string{string(r), r.CkptDir(), r.SamplesDir(), r.FiguresDir()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("grpo: run folder: %w", err)
		}
	}
	for name, v := range map[string]any{runs.ConfigFile: cfg, runs.ProvenanceFile: prov} {
		data, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return fmt.Errorf("grpo: %s: %w", name, err)
		}
		if err := atomicfile.WriteFile(filepath.Join(string(r), name), append(data, '\n')); err != nil {
			return fmt.Errorf("grpo: %w", err)
		}
	}
	return nil
}

// StepsFile is train.jsonl.
func (r RunFolder) StepsFile() string { return filepath.Join(string(r), runs.StepsFile) }

// EvalsFile is eval.jsonl.
func (r RunFolder) EvalsFile() string { return filepath.Join(string(r), runs.EvalsFile) }

// ReadSteps returns the lines of train.jsonl up to optimizer step upTo (later
// ones belong to a run that stopped after its last checkpoint), leaving out a
// partial last line (none when there is no file).
func (r RunFolder) ReadSteps(upTo int) ([]metrics.StepMetrics, error) {
	path := r.StepsFile()
	data, err := completeLines(path)
	if err != nil {
		return nil, err
	}
	steps, err := metrics.ReadStepMetrics(bytes.NewReader(data), path)
	if err != nil {
		return nil, err
	}
	n := 0
	for n < len(steps) && steps[n].Step <= upTo {
		n++
	}
	return steps[:n], nil
}

// ReadEvals returns the lines of eval.jsonl, leaving out a partial last line
// (none when there is no file).
func (r RunFolder) ReadEvals() ([]metrics.EvalPoint, error) {
	path := r.EvalsFile()
	data, err := completeLines(path)
	if err != nil {
		return nil, err
	}
	return metrics.ReadEvalPoints(bytes.NewReader(data), path)
}

// TruncateMetrics cuts train.jsonl and eval.jsonl back to optimizer step
// step, once, when a run starts (step 0) or resumes from a checkpoint: it drops
// a partial last line (a crash mid-write) and the lines of later steps, which
// a run that stopped after its last checkpoint left. The lines kept keep their
// bytes; a file that changes is rewritten atomically. A missing train.jsonl is
// created empty, a missing eval.jsonl stays missing. It returns the
// train.jsonl lines kept. After it, the trainer only appends (AppendStep,
// AppendEval), so that a step costs the same however long the run.
func (r RunFolder) TruncateMetrics(step int) ([]metrics.StepMetrics, error) {
	steps, err := r.ReadSteps(step)
	if err != nil {
		return nil, err
	}
	if err := keepLines(r.StepsFile(), len(steps)); err != nil {
		return nil, err
	}
	if err := appendLine(r.StepsFile(), nil, nil); err != nil { // creates it
		return nil, err
	}
	evals, err := r.ReadEvals()
	if err != nil {
		return nil, err
	}
	n := 0
	for n < len(evals) && evals[n].Step <= step {
		n++
	}
	return steps, keepLines(r.EvalsFile(), n)
}

// AppendStep adds m's line to train.jsonl.
func (r RunFolder) AppendStep(m metrics.StepMetrics) error {
	var line bytes.Buffer
	if err := metrics.WriteStepMetrics(&line, m); err != nil {
		return fmt.Errorf("grpo: %s: %w", r.StepsFile(), err)
	}
	return appendLine(r.StepsFile(), line.Bytes(), nil)
}

// AppendEval adds p's line to eval.jsonl. A last line of the same or a later
// step is replaced: a resumed run repeats the evaluation of its checkpoint's
// step, which TruncateMetrics keeps in case it does not.
func (r RunFolder) AppendEval(p metrics.EvalPoint) error {
	line, err := jsonl.Marshal(p)
	if err != nil {
		return fmt.Errorf("grpo: eval line: %w", err)
	}
	path := r.EvalsFile()
	return appendLine(path, append(line, '\n'), func(last []byte) (bool, error) {
		var q metrics.EvalPoint
		if err := json.Unmarshal(last, &q); err != nil {
			return false, fmt.Errorf("grpo: %s: last line: %w", path, err)
		}
		return q.Step >= p.Step, nil
	})
}

// Figures draws the training curves of train.jsonl, with the evaluations of
// eval.jsonl, into figures/training_NAME.{png,svg}, as `mathrl plot train`
// does.
func (r RunFolder) Figures(name string) error {
	_, err := plots.WriteFigures(plots.KindTrain, plots.Inputs{Out: r.FiguresDir(), Metrics: r.StepsFile(), Name: name})
	return err
}

// completeLines returns the bytes of the file path up to its last newline,
// leaving out a partial last line (a crash mid-write); nil when there is no
// file.
func completeLines(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("grpo: %w", err)
	}
	return data[:bytes.LastIndexByte(data, '\n')+1], nil
}

// keepLines cuts the file path after its first n lines that are not blank,
// rewriting it atomically when that changes it (a partial last line is never
// kept). A missing file stays missing.
func keepLines(path string, n int) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("grpo: %w", err)
	}
	end := 0
	for rest := data; n > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		if len(bytes.TrimSpace(rest[:i])) > 0 {
			n--
		}
		end, rest = end+i+1, rest[i+1:]
	}
	if end == len(data) {
		return nil
	}
	if err := atomicfile.WriteFile(path, data[:end]); err != nil {
		return fmt.Errorf("grpo: %w", err)
	}
	return nil
}

// appendLine adds line (one JSON line, newline included) at the end of the
// file path, creating it, in one write, then syncs the file: a line is on disk
// before the next step, as a checkpoint that covers it is. When replace is set
// and reports true for the file's last line, that line is cut off first. Its
// cost does not depend on the length of the file.
func appendLine(path string, line []byte, replace func(last []byte) (bool, error)) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("grpo: %w", err)
	}
	defer f.Close()
	if replace != nil {
		if err := cutLastLine(f, replace); err != nil {
			return err
		}
	}
	if err := writeWhole(f, line); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("grpo: %w", err)
	}
	return nil
}

// writeWhole appends line to f and syncs it, or on failure (a full disk)
// cuts off what part of it got written, so that f never ends with half a line.
func writeWhole(f *os.File, line []byte) error {
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("grpo: %w", err)
	}
	_, err = f.Write(line)
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		if terr := f.Truncate(info.Size()); terr != nil {
			return fmt.Errorf("grpo: %w (and cutting the partial line: %v)", err, terr)
		}
		return fmt.Errorf("grpo: %w", err)
	}
	return nil
}

// cutLastLine truncates f before its last line when replace reports true for
// that line.
func cutLastLine(f *os.File, replace func(last []byte) (bool, error)) error {
	off, last, err := lastLine(f)
	if err != nil || len(bytes.TrimSpace(last)) == 0 {
		return err
	}
	if ok, err := replace(last); err != nil || !ok {
		return err
	}
	if err := f.Truncate(off); err != nil {
		return fmt.Errorf("grpo: %w", err)
	}
	return nil
}

// lastLine returns the last line of f, which ends with a newline, and its
// offset. It reads back from the end 4 KiB at a time, as far as the line goes.
func lastLine(f *os.File) (int64, []byte, error) {
	info, err := f.Stat()
	if err != nil {
		return 0, nil, fmt.Errorf("grpo: %w", err)
	}
	var tail []byte
	for off := info.Size(); off > 0; {
		n := min(off, 4096)
		off -= n
		chunk := make([]byte, n)
		if _, err := f.ReadAt(chunk, off); err != nil {
			return 0, nil, fmt.Errorf("grpo: %w", err)
		}
		tail = append(chunk, tail...)
		if i := bytes.LastIndexByte(tail[:len(tail)-1], '\n'); i >= 0 {
			return off + int64(i) + 1, tail[i+1:], nil
		}
	}
	return 0, tail, nil
}
