package runs

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// write creates a run folder under root with the given files.
func write(t *testing.T, root, name string, files map[string]string) {
	t.Helper()
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for f, body := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const prov = `{"command":"mathrl train --seed 2","started":"2026-01-01T00:00:00Z","git_commit":"0123456789abcdef","git_dirty":true,
"go_version":"go1.26","modules":{"github.com/gomlx/gomlx":"v0.26.0"},"backend":"go","device":"cpu","scorer":"math","seed":2,"sandbox":"none","host_cpus":"2"}`

func TestLoadReadsProvenanceAndTheFinalEvaluation(t *testing.T) {
	root := t.TempDir()
	cfg := `{"seed": 2}`
	write(t, root, "ablation/grpo-seed2", map[string]string{
		"provenance.json": prov, "config.json": cfg,
		"eval.jsonl": `{"step":0,"rollout":0,"k":2,"avg_at_k":0.1,"pass_at_k":0.2,"truncation_rate":0,"tool_calls_mean":1,"scorer_errors":0}
{"step":30,"rollout":30,"k":2,"avg_at_k":0.375,"pass_at_k":0.5,"truncation_rate":0.0234375,"tool_calls_mean":1,"scorer_errors":0}
`})
	write(t, root, "notes", map[string]string{"README.md": "not a run"})
	runs, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 {
		t.Fatalf("got %d runs, want 1", len(runs))
	}
	r := runs[0]
	sum := sha256.Sum256([]byte(cfg))
	if r.Name != filepath.Join("ablation", "grpo-seed2") || r.Final.Step != 30 || r.ConfigSHA256 != hex.EncodeToString(sum[:]) ||
		len(r.Evals) != 2 || r.Evals[0].Step != 0 || r.Evals[0].AvgAtK != 0.1 || r.Evals[1] != r.Final {
		t.Errorf("got %+v", r)
	}
	if r.Commit() != "0123456789+changes" || r.Engine() != "GoMLX v0.26.0, go" {
		t.Errorf("commit %q, engine %q", r.Commit(), r.Engine())
	}
	want := "| ablation/grpo-seed2 | 30 | 37.5 | 50.0 | 2 | 2.3 | math | GoMLX v0.26.0, go | `0123456789+changes` | `" +
		hex.EncodeToString(sum[:])[:12] + "` | `mathrl train --seed 2` |"
	if md := Markdown(runs); !strings.Contains(md, want) {
		t.Errorf("markdown:\n%s\nwant a line\n%s", md, want)
	}
}

func TestLoadNamesTheBadFile(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"provenance.json": {"provenance.json": "{", "config.json": "{}", "eval.jsonl": ""},
		"config.json":     {"provenance.json": prov, "eval.jsonl": ""},
		"eval.jsonl":      {"provenance.json": prov, "config.json": "{}", "eval.jsonl": "{\"step\":\"x\"}\n"},
		"no evaluation":   {"provenance.json": prov, "config.json": "{}", "eval.jsonl": ""},
	} {
		root := t.TempDir()
		write(t, root, "run", files)
		_, err := Load(root)
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: got %v", name, err)
		}
	}
	if _, err := Load(t.TempDir()); err == nil {
		t.Error("an empty folder: no error")
	}
}

func TestLoadReadsTheCommittedRuns(t *testing.T) {
	runs, err := Load(filepath.Join("..", "..", "results", "runs"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.Provenance.GitCommit == "" || r.Final.K == 0 || r.Provenance.Scorer == "" {
			t.Errorf("%s: incomplete: %+v", r.Name, r)
		}
	}
}

func TestPrefixed(t *testing.T) {
	rs := []Run{{Name: "ablation/grpo-seed1"}, {Name: "demo"}, {Name: "demo-seed2"}, {Name: "other-demo"}}
	got := Prefixed(rs, "demo")
	if len(got) != 2 || got[0].Name != "demo" || got[1].Name != "demo-seed2" {
		t.Errorf("Prefixed(demo) = %+v", got)
	}
	if got := Prefixed(rs, "none"); len(got) != 0 {
		t.Errorf("Prefixed(none) = %+v", got)
	}
}
