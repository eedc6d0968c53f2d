package grpo

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mathrl/mathrl/analysis/metrics"
	"github.com/mathrl/mathrl/gomlx_trainer/engine"
)

// TestAPIKeyIsNeverWritten: rollout_engine_api_key is read from a recipe,
// its help names the environment variable the trainer falls back on, and it
// is left out of config.json and of a checkpoint's state.
func TestAPIKeyIsNeverWritten(t *testing.T) {
	const key = "s3cret-Qx7"
	cfg, err := DecodeConfig(strings.NewReader("rollout_engine_api_key: \""+key+"\"\n"), "recipe.yaml", Default())
	if err != nil || cfg.RolloutEngineAPIKey != key {
		t.Fatalf("decoded %q, %v", cfg.RolloutEngineAPIKey, err)
	}
	if help := knobsByKey()["rollout_engine_api_key"].Help; !strings.Contains(help, engine.APIKeyEnv) {
		t.Errorf("the help does not name $%s: %s", engine.APIKeyEnv, help)
	}
	run := RunFolder(filepath.Join(t.TempDir(), "run"))
	if err := run.Init(cfg, metrics.Provenance{}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(string(run), "config.json"))
	if err != nil || strings.Contains(string(data), key) || strings.Contains(string(data), "api_key") {
		t.Errorf("config.json holds the key (%v):\n%s", err, data)
	}
	state, err := json.Marshal(TrainState{Config: cfg})
	if err != nil || strings.Contains(string(state), key) {
		t.Errorf("the checkpoint state holds the key (%v): %s", err, state)
	}
}

// noKeyIn fails t if any file under the folders, or the log, holds key.
func noKeyIn(t *testing.T, key, log string, folders ...string) {
	t.Helper()
	if strings.Contains(log, key) {
		t.Errorf("the log shows the API key")
	}
	for _, dir := range folders {
		filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if data, err := os.ReadFile(path); err == nil && strings.Contains(string(data), key) {
				t.Errorf("%s holds the API key", path)
			}
			return nil
		})
	}
}
