package grpo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// tmpfs mounts a tmpfs of size bytes on a fresh folder and returns the
// folder; the mount goes when the test ends. It skips the test where mounting
// is not allowed (it needs root).
func tmpfs(t *testing.T, size int64) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		t.Skipf("a full disk is a small tmpfs here, and mounting one failed (it needs root): %v", err)
	}
	t.Cleanup(func() { // runs before TempDir's removal, registered earlier
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fillDisk allocates a file under dir that leaves about free bytes free on
// its file system (none when free is 0), and returns the file.
func fillDisk(t *testing.T, dir string, free int64) string {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	f, err := os.CreateTemp(dir, "filler-")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Fallocate(int(f.Fd()), 0, 0, int64(st.Bavail)*st.Bsize-free); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

// TestAppendOnFullDisk appends a train.jsonl line longer than a page on a
// full disk (eval.jsonl goes through the same append): the error must say so
// and name the file, and the file must keep its bytes, although the start of
// the line fits in the slack of its last page.
func TestAppendOnFullDisk(t *testing.T) {
	dir := tmpfs(t, 1<<20)
	run := RunFolder(filepath.Join(dir, "run"))
	if err := os.MkdirAll(string(run), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := run.AppendStep(stepLine(1)); err != nil {
		t.Fatal(err)
	}
	before := readFile(t, run.StepsFile())
	fillDisk(t, dir, 0)
	long := stepLine(2)
	long.Extra = map[string]float64{}
	for i := range 300 {
		long.Extra[fmt.Sprintf("extra_metric_%03d", i)] = float64(i) // a 7 KB line
	}
	err := run.AppendStep(long)
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), run.StepsFile()) {
		t.Errorf("append on a full disk: %v, want ENOSPC naming %s", err, run.StepsFile())
	}
	if after := readFile(t, run.StepsFile()); !bytes.Equal(after, before) {
		t.Errorf("train.jsonl went from %d to %d bytes", len(before), len(after))
	}
}

// TestFullDiskDuringSave fills the disk after the first rollout so that its
// checkpoint does not fit (half of the warm start's checkpoint is left free):
// the run must stop with one error naming the checkpoint folder and ENOSPC,
// leave the warm start's checkpoint intact and no partial one, and, once
// space is freed, resume to the weights and metrics of a run that never
// stopped.
func TestFullDiskDuringSave(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny model")
	}
	dir := tmpfs(t, 64<<20)
	backend := testBackend(t)
	straight := smokeConfig(t)
	straight.SaveInterval = 1
	var log testLog
	if err := Train(context.Background(), straight, TrainOptions{Backend: backend, Tools: arithTools{}, Progress: &log}); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}

	cfg := straight
	cfg.Save = filepath.Join(dir, "run")
	run := RunFolder(cfg.Save)
	first := filepath.Join(run.CkptDir(), CheckpointName(0))
	var filler string
	fillAfterFirst := func(r RolloutLog) {
		if r.Rollout == 1 {
			size, err := diskBytes(first)
			if err != nil {
				t.Error(err)
			}
			filler = fillDisk(t, dir, size/2)
		}
	}
	err := Train(context.Background(), cfg, TrainOptions{Backend: backend, Tools: arithTools{}, Progress: &log, OnRollout: fillAfterFirst})
	second := filepath.Join(run.CkptDir(), CheckpointName(straight.StepsPerRollout()))
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), second) {
		t.Fatalf("Train returned %v, want ENOSPC naming %s\n%s", err, second, log)
	}
	t.Logf("the run stopped with: %v", err)
	if names, _ := os.ReadDir(run.CkptDir()); len(names) != 1 || names[0].Name() != CheckpointName(0) {
		t.Errorf("ckpt holds %v, want only %s", names, CheckpointName(0))
	}
	if _, err := VerifyCheckpoint(first); err != nil {
		t.Errorf("the checkpoint before the full disk: %v", err)
	}
	for _, path := range []string{run.StepsFile(), run.EvalsFile()} {
		if data, err := os.ReadFile(path); err != nil || len(data) == 0 || data[len(data)-1] != '\n' {
			t.Errorf("%s: %d bytes, %v: want whole lines", path, len(data), err)
		}
	}

	removeFile(t, filler)
	if err := Train(context.Background(), cfg, TrainOptions{Backend: backend, Tools: arithTools{}, Resume: true, Progress: &log}); err != nil {
		t.Fatalf("resume after freeing space: %v\n%s", err, log)
	}
	sameFinalCheckpoint(t, straight.Save, cfg.Save)
	sameStepLines(t, straight.Save, cfg.Save)
}
