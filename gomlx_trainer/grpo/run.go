package grpo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/gomlx/gomlx/backends"

	"github.com/mathrl/mathrl/analysis/metrics"
	"github.com/mathrl/mathrl/analysis/plots"
	"github.com/mathrl/mathrl/internal/atomicfile"
)

// RunFolder is one run's folder:
//
//	config.json       the resolved Config
//	provenance.json   code version, Go and module versions, backend, device, seeds
//	train.jsonl       one metrics.StepMetrics line per optimizer step
//	eval.jsonl        one metrics.EvalPoint line per evaluation
//	samples/          eval samples (metrics.Sample JSONL), step-NNNNNN.jsonl
//	ckpt/             checkpoints, step-NNNNNN/ (Hugging Face folders + optimizer and trainer state)
//	figures/          training curves, training_NAME.{png,svg} (NAME: the folder's name)
type RunFolder string

// CkptDir is the checkpoint folder.
func (r RunFolder) CkptDir() string { return filepath.Join(string(r), "ckpt") }

// SamplesDir is the eval samples folder.
func (r RunFolder) SamplesDir() string { return filepath.Join(string(r), "samples") }

// FiguresDir is the figures folder.
func (r RunFolder) FiguresDir() string { return filepath.Join(string(r), "figures") }

// Provenance records where a run came from.
type Provenance struct {
	Command   string            `json:"command,omitempty"` // the command line
	Started   string            `json:"started"`           // RFC 3339, UTC
	GitCommit string            `json:"git_commit"`        // "unknown" outside a git checkout
	GitDirty  bool              `json:"git_dirty"`         // uncommitted changes at start
	GoVersion string            `json:"go_version"`
	Modules   map[string]string `json:"modules"`   // module path -> version, from the build info
	Backend   string            `json:"backend"`   // GoMLX backend name
	Device    string            `json:"device"`    // backend description
	Scorer    string            `json:"scorer"`    // rm_type
	Seed      int64             `json:"seed"`      // cfg.Seed
	Sandbox   string            `json:"sandbox"`   // tool isolation level
	Host      string            `json:"host_cpus"` // CPUs seen by Go
}

// with fills in what the trainer knows.
func (p Provenance) with(cfg Config, backend backends.Backend, isolation string) Provenance {
	p.Started = time.Now().UTC().Format(time.RFC3339)
	p.GitCommit, p.GitDirty = gitState()
	p.GoVersion = runtime.Version()
	p.Modules = map[string]string{}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			p.Modules[m.Path] = m.Version
		}
	}
	if backend != nil {
		p.Backend, p.Device = backend.Name(), backend.Description()
	}
	p.Scorer, p.Seed, p.Sandbox = cfg.RMType, cfg.Seed, isolation
	p.Host = fmt.Sprint(runtime.NumCPU())
	return p
}

// gitState returns the commit of the working tree and whether it has changes,
// from the build info when present, else from git.
func gitState() (string, bool) {
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev string
		var dirty bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if rev != "" {
			return rev, dirty
		}
	}
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "unknown", false
	}
	status, _ := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output()
	return strings.TrimSpace(string(out)), len(bytes.TrimSpace(status)) > 0
}

// Init creates the folder and writes config.json and provenance.json.
func (r RunFolder) Init(cfg Config, prov Provenance) error {
	for _, d := range []string{string(r), r.CkptDir(), r.SamplesDir(), r.FiguresDir()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("grpo: run folder: %w", err)
		}
	}
	for name, v := range map[string]any{"config.json": cfg, "provenance.json": prov} {
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
func (r RunFolder) StepsFile() string { return filepath.Join(string(r), "train.jsonl") }

// ReadSteps returns the lines of train.jsonl up to optimizer step upTo (later
// ones belong to a run that stopped after its last checkpoint and are dropped).
func (r RunFolder) ReadSteps(upTo int) ([]metrics.StepMetrics, error) {
	path := r.StepsFile()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("grpo: %w", err)
	}
	defer f.Close()
	steps, err := metrics.ReadStepMetrics(f, path)
	if err != nil {
		return nil, err
	}
	n := 0
	for n < len(steps) && steps[n].Step <= upTo {
		n++
	}
	return steps[:n], nil
}

// WriteSteps rewrites train.jsonl with steps, atomically.
func (r RunFolder) WriteSteps(steps []metrics.StepMetrics) error {
	return atomicfile.Write(r.StepsFile(), func(w io.Writer) error {
		return metrics.WriteStepMetrics(w, steps...)
	})
}

// ReadEvals returns the lines of eval.jsonl (none when there is no file).
func (r RunFolder) ReadEvals() ([]metrics.EvalPoint, error) {
	path := filepath.Join(string(r), "eval.jsonl")
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("grpo: %w", err)
	}
	defer f.Close()
	return metrics.ReadEvalPoints(f, path)
}

// AppendEval adds p to eval.jsonl, replacing any earlier line of the same or a
// later step (left by a run that resumed from an earlier checkpoint).
func (r RunFolder) AppendEval(p metrics.EvalPoint) error {
	points, err := r.ReadEvals()
	if err != nil {
		return err
	}
	n := 0
	for n < len(points) && points[n].Step < p.Step {
		n++
	}
	points = append(points[:n], p)
	return atomicfile.Write(filepath.Join(string(r), "eval.jsonl"), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		for _, q := range points {
			if err := enc.Encode(q); err != nil {
				return err
			}
		}
		return nil
	})
}

// Figures draws the training curves of train.jsonl, with the evaluations of
// eval.jsonl, into figures/training_NAME.{png,svg}, as `mathrl plot train`
// does.
func (r RunFolder) Figures(name string) error {
	_, err := plots.WriteFigures(plots.KindTrain, plots.Inputs{Out: r.FiguresDir(), Metrics: r.StepsFile(), Name: name})
	return err
}
