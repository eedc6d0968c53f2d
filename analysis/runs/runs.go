package runs

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mathrl/mathrl/analysis/metrics"
)

// Run is one training run folder.
type Run struct {
	Name         string              // the folder, relative to the root it was found under
	Provenance   metrics.Provenance  // provenance.json
	ConfigSHA256 string              // sha256 of config.json, the resolved recipe
	Evals        []metrics.EvalPoint // eval.jsonl, in the order written
	Final        metrics.EvalPoint   // the last line of eval.jsonl
}

// Load reads every folder under root that holds a provenance.json, in path
// order. Each must also hold config.json and an eval.jsonl with at least one
// evaluation. It is an error when none is found.
func Load(root string) ([]Run, error) {
	var out []Run
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != ProvenanceFile {
			return err
		}
		dir := filepath.Dir(path)
		r, err := read(dir)
		if err != nil {
			return err
		}
		if r.Name, err = filepath.Rel(root, dir); err != nil {
			return err
		}
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("runs: %w", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("runs: no run folder (with %s) under %s", ProvenanceFile, root)
	}
	return out, nil
}

// read reads one run folder.
func read(dir string) (Run, error) {
	var r Run
	raw, err := os.ReadFile(filepath.Join(dir, ProvenanceFile))
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(raw, &r.Provenance); err != nil {
		return r, fmt.Errorf("%s: %w", filepath.Join(dir, ProvenanceFile), err)
	}
	cfg, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err != nil {
		return r, err
	}
	sum := sha256.Sum256(cfg)
	r.ConfigSHA256 = hex.EncodeToString(sum[:])
	path := filepath.Join(dir, EvalsFile)
	f, err := os.Open(path)
	if err != nil {
		return r, err
	}
	defer f.Close()
	points, err := metrics.ReadEvalPoints(f, path)
	if err != nil {
		return r, err
	}
	if len(points) == 0 {
		return r, errors.New(path + ": no evaluation")
	}
	r.Evals, r.Final = points, points[len(points)-1]
	return r, nil
}

// Engine names the backend and the GoMLX version that ran the run.
func (r Run) Engine() string {
	return fmt.Sprintf("GoMLX %s, %s", r.Provenance.Modules["github.com/gomlx/gomlx"], r.Provenance.Backend)
}

// Commit is the short commit the run was built from, marked "+changes" when
// the working tree had uncommitted changes.
func (r Run) Commit() string {
	c := r.Provenance.GitCommit
	if len(c) > 10 {
		c = c[:10]
	}
	if r.Provenance.GitDirty {
		c += "+changes"
	}
	return c
}

// Markdown tables runs: the final evaluation of each, and where it came from.
func Markdown(runs []Run) string {
	var b strings.Builder
	b.WriteString("| run | step | avg@k (%) | pass@k (%) | k | truncated (%) | scorer | engine | commit | config sha256 | command |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---|---|---|---|---|\n")
	for _, r := range runs {
		p := r.Final
		fmt.Fprintf(&b, "| %s | %d | %.1f | %.1f | %d | %.1f | %s | %s | `%s` | `%s` | `%s` |\n", r.Name, p.Step,
			100*p.AvgAtK, 100*p.PassAtK, p.K, 100*p.Truncation, r.Provenance.Scorer, r.Engine(), r.Commit(),
			r.ConfigSHA256[:12], r.Provenance.Command)
	}
	return b.String()
}

// Prefixed returns the runs whose name starts with prefix, in their order.
func Prefixed(rs []Run, prefix string) []Run {
	var out []Run
	for _, r := range rs {
		if strings.HasPrefix(r.Name, prefix) {
			out = append(out, r)
		}
	}
	return out
}
