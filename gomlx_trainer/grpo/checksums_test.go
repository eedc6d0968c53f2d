package grpo

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
)

// savedCheckpoints trains a tiny learner one step (so that it has optimizer
// moments) and saves it as the checkpoints of the given steps under a fresh
// ckpt folder, which it returns.
func savedCheckpoints(t *testing.T, steps ...int) string {
	t.Helper()
	l := NewLearner(testBackend(t), tinyModel(t, 3), LossConfig{EpsLow: 0.2, EpsHigh: 0.28}, AdamWConfig{Beta1: 0.9, Beta2: 0.98, Eps: 1e-8}, 1)
	trainSteps(t, l, 0, 1)
	ckpt := filepath.Join(t.TempDir(), "ckpt")
	for _, s := range steps {
		if err := SaveCheckpoint(filepath.Join(ckpt, CheckpointName(s)), l.Model, []byte(`{"model": {}}`), TrainState{Step: s, Config: Default()}); err != nil {
			t.Fatal(err)
		}
	}
	return ckpt
}

// TestChecksumsMatchSha256sum checks the index against the sha256sum tool:
// one line per other file of the folder, with its digest.
func TestChecksumsMatchSha256sum(t *testing.T) {
	if _, err := exec.LookPath("sha256sum"); err != nil {
		t.Skip("no sha256sum to compare with")
	}
	dir := filepath.Join(savedCheckpoints(t, 1), CheckpointName(1))
	data, err := os.ReadFile(filepath.Join(dir, checksumsFile))
	if err != nil {
		t.Fatal(err)
	}
	var sums checksums
	if err := json.Unmarshal(data, &sums); err != nil {
		t.Fatal(err)
	}
	want := []string{"config.json", "model.safetensors", optimizerFile, "tokenizer.json", stateFile}
	if len(sums.SHA256) != len(want) {
		t.Errorf("index lists %d files, want %v", len(sums.SHA256), want)
	}
	for _, name := range want {
		out, err := exec.Command("sha256sum", filepath.Join(dir, name)).Output()
		if err != nil {
			t.Fatal(err)
		}
		if got := sums.SHA256[name]; got != strings.Fields(string(out))[0] {
			t.Errorf("%s: index %q, sha256sum %q", name, got, strings.Fields(string(out))[0])
		}
	}
}

// TestResumePassesOverDamagedCheckpoint damages the newest of two
// checkpoints in several ways: resume must pick the older one, after one log
// line naming the damaged folder and file; the damaged one is set aside as
// step-NNNNNN.damaged, and LoadCheckpoint refuses it with a DamagedError
// naming the file.
func TestResumePassesOverDamagedCheckpoint(t *testing.T) {
	for _, tc := range []struct {
		name   string
		file   string // the file damaged, and named in the message
		damage func(t *testing.T, path string)
	}{
		{"truncated weights", "model.safetensors", func(t *testing.T, path string) {
			info, _ := os.Stat(path)
			if err := os.Truncate(path, info.Size()/2); err != nil {
				t.Fatal(err)
			}
		}},
		{"flipped byte in the optimizer state", optimizerFile, func(t *testing.T, path string) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			data[len(data)-5] ^= 0x10 // in the last tensor's data: the file still parses
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"index deleted", checksumsFile, func(t *testing.T, path string) { removeFile(t, path) }},
		{"trainer state deleted", stateFile, func(t *testing.T, path string) { removeFile(t, path) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ckpt := savedCheckpoints(t, 2, 4)
			bad := filepath.Join(ckpt, CheckpointName(4))
			tc.damage(t, filepath.Join(bad, tc.file))
			var log testLog
			dir, err := resumeCheckpoint(ckpt, newProgress(&log))
			if err != nil || dir != filepath.Join(ckpt, CheckpointName(2)) {
				t.Fatalf("resume picks %q, %v; want %s", dir, err, CheckpointName(2))
			}
			lines := strings.Split(strings.TrimSpace(log.String()), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], bad) || !strings.Contains(lines[0], tc.file) {
				t.Errorf("log %q: want one line naming %s and %s", log.String(), bad, tc.file)
			}
			if names, _ := checkpointNames(ckpt); !slices.Equal(names, []string{CheckpointName(2)}) {
				t.Errorf("checkpoints left in the way: %v", names)
			}
			_, _, err = LoadCheckpoint(bad+damagedSuffix, dtypes.Float32)
			var damaged *DamagedError
			if !errors.As(err, &damaged) || damaged.File != tc.file || damaged.Dir != bad+damagedSuffix {
				t.Errorf("LoadCheckpoint of the damaged folder: %v", err)
			}
		})
	}
}

func removeFile(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}

// TestResumeWithEveryCheckpointDamaged requires an error naming the ckpt
// folder, with each damaged checkpoint reported, and nothing deleted.
func TestResumeWithEveryCheckpointDamaged(t *testing.T) {
	ckpt := savedCheckpoints(t, 2, 4)
	for _, s := range []int{2, 4} {
		removeFile(t, filepath.Join(ckpt, CheckpointName(s), "model.safetensors"))
	}
	var log testLog
	dir, err := resumeCheckpoint(ckpt, newProgress(&log))
	if err == nil || !strings.Contains(err.Error(), ckpt) {
		t.Fatalf("resume picks %q, %v; want an error naming %s", dir, err, ckpt)
	}
	if n := strings.Count(log.String(), "is damaged (model.safetensors: missing)"); n != 2 {
		t.Errorf("log %q: want both checkpoints reported", log.String())
	}
	if names, _ := checkpointNames(ckpt); len(names) != 2 {
		t.Errorf("checkpoints left: %v", names)
	}
}

// TestVersion2CheckpointLoadsUnverified turns a checkpoint into the layout
// before checksums (no index, version 2): it is resumed from, with a note
// that it was not verified.
func TestVersion2CheckpointLoadsUnverified(t *testing.T) {
	ckpt := savedCheckpoints(t, 2)
	dir := filepath.Join(ckpt, CheckpointName(2))
	removeFile(t, filepath.Join(dir, checksumsFile))
	path := filepath.Join(dir, stateFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	old := strings.Replace(string(data), `"version": 3,`, `"version": 2,`, 1)
	if old == string(data) {
		t.Fatalf("no version 3 in %s", data)
	}
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	var log testLog
	got, err := resumeCheckpoint(ckpt, newProgress(&log))
	if err != nil || got != dir || !strings.Contains(log.String(), "not verified") {
		t.Errorf("resume picks %q, %v, log %q", got, err, log.String())
	}
	if _, st, err := LoadCheckpoint(dir, dtypes.Float32); err != nil || st.Version != 2 || st.Step != 2 {
		t.Errorf("LoadCheckpoint: state %+v, %v", st, err)
	}
}

// TestTidyCheckpoints undoes what a crash inside SaveCheckpoint leaves: a
// folder being filled goes, a step-N.old whose replacement never arrived comes
// back as step-N, and one whose replacement did goes.
func TestTidyCheckpoints(t *testing.T) {
	ckpt := savedCheckpoints(t, 2, 4, 6)
	rename := func(from, to string) {
		if err := os.Rename(filepath.Join(ckpt, from), filepath.Join(ckpt, to)); err != nil {
			t.Fatal(err)
		}
	}
	rename(CheckpointName(2), "."+CheckpointName(8)+tmpInfix+"123")
	rename(CheckpointName(4), CheckpointName(4)+oldSuffix) // crash between the renames
	if err := os.Mkdir(filepath.Join(ckpt, CheckpointName(6)+oldSuffix), 0o755); err != nil {
		t.Fatal(err) // crash before the last RemoveAll
	}
	var log testLog
	if err := tidyCheckpoints(ckpt, newProgress(&log)); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{CheckpointName(4), CheckpointName(6)}; strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("left %v, want %v\n%s", names, want, log.String())
	}
	if _, err := VerifyCheckpoint(filepath.Join(ckpt, CheckpointName(4))); err != nil {
		t.Errorf("restored checkpoint: %v", err)
	}
}
