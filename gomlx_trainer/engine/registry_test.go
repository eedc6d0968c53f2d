package engine

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCheckNamesTheKnob: each config the server engines cannot use is a
// *FieldError naming its knob, and a usable one passes.
func TestCheckNamesTheKnob(t *testing.T) {
	ok := Config{Name: SGLang, URLs: []string{"http://a:1", "https://b:2/"}, Batch: 8}
	if err := Check(ok); err != nil {
		t.Fatalf("Check(%+v) = %v", ok, err)
	}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		key  string
		msg  string
	}{
		{"unknown engine", func(c *Config) { c.Name = "vllm" }, "rollout_engine", `"vllm" is not`},
		{"no server", func(c *Config) { c.URLs = nil }, "rollout_engine_urls", "empty"},
		{"no scheme", func(c *Config) { c.URLs = []string{"http://a:1", "b:2"} }, "rollout_engine_urls", `"b:2"`},
		{"negative batch", func(c *Config) { c.Batch = -1 }, "rollout_engine_batch", "negative"},
		{"batch over openai", func(c *Config) { c.Name = OpenAI }, "rollout_engine_batch", "only rollout_engine sglang"},
		{"one a request over openai", func(c *Config) { c.Name, c.Batch = OpenAI, 1 }, "rollout_engine_batch", "only rollout_engine sglang"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			c.URLs = slices.Clone(ok.URLs)
			tc.edit(&c)
			var fe *FieldError
			err := Check(c)
			if !errors.As(err, &fe) || fe.Key != tc.key || !strings.Contains(fe.Msg, tc.msg) {
				t.Errorf("Check = %v, want a %s error saying %q", err, tc.key, tc.msg)
			}
			if _, err := New(c, Policy{Vocab: 10, Checkpoint: "ckpt"}); err == nil || !strings.Contains(err.Error(), tc.key) {
				t.Errorf("New = %v, want the check's error", err)
			}
		})
	}
}

// TestNamesListsTheServers: both protocols are registered engines, and
// Names lists them sorted every time.
func TestNamesListsTheServers(t *testing.T) {
	for _, p := range Protocols() {
		if !slices.Contains(Names(), p) {
			t.Errorf("Names() = %q, without %s", Names(), p)
		}
	}
	for range 20 { // map order varies from call to call: one sorted call could be luck
		if names := Names(); !slices.IsSorted(names) {
			t.Fatalf("Names() = %q, not sorted", names)
		}
	}
}

// TestRegisterRefusesADuplicate: a second engine of the same name panics.
func TestRegisterRefusesADuplicate(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Register of sglang again did not panic")
		}
	}()
	Register(Spec{Name: SGLang, New: newServersEngine})
}

// TestServersLoadTheCheckpoint: a server engine made for a checkpoint folder
// has each worker load that folder, by its absolute path, under the
// checkpoint's version, writes nothing, and loads it once however often it
// syncs.
func TestServersLoadTheCheckpoint(t *testing.T) {
	ckpt := t.TempDir()
	if err := os.WriteFile(filepath.Join(ckpt, "model.safetensors"), []byte("w"), 0o644); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(mustGetwd(t), ckpt)
	if err != nil {
		t.Fatal(err)
	}
	w := &fakeWorker{version: "0"}
	srv := httptest.NewServer(w)
	defer srv.Close()
	eng, err := New(Config{Name: SGLang, URLs: []string{srv.URL}}, Policy{Vocab: 10, Checkpoint: rel,
		Save: func(string) error { t.Error("the checkpoint was saved again"); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := eng.Sync(context.Background(), 0); err != nil {
			t.Fatal(err)
		}
	}
	if updates, loads := w.counts(); updates != 1 || loads != 1 || w.loaded[0] != ckpt || w.at() != CheckpointVersion(ckpt) {
		t.Errorf("%d updates, loads %q, at %q; want one load of %s at %q", updates, w.loaded, w.at(), ckpt, CheckpointVersion(ckpt))
	}
}

// TestServersNeedWeights: a server engine with neither a checkpoint nor a
// weights_dir to push from is refused.
func TestServersNeedWeights(t *testing.T) {
	_, err := New(Config{Name: SGLang, URLs: []string{"http://a:1"}}, Policy{Vocab: 10, Save: func(string) error { return nil }})
	if err == nil || !strings.Contains(err.Error(), "weights_dir") {
		t.Errorf("New without weights = %v, want an error naming weights_dir", err)
	}
}

// TestImportsNoGoMLX: the engine package and so its HTTP client build
// without GoMLX (the in-process engine lives in inprocess).
func TestImportsNoGoMLX(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/gomlx/") {
			t.Errorf("engine depends on %s", dep)
		}
	}
	if !strings.Contains(string(out), "gomlx_trainer/engine") {
		t.Fatalf("go list -deps . does not list the package itself:\n%s", out)
	}
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

// TestRegisterRefusesASpecWithoutConstructor: an engine that cannot be made
// panics at Register, not at the first New of a run.
func TestRegisterRefusesASpecWithoutConstructor(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Register of a Spec without New did not panic")
		}
	}()
	Register(Spec{Name: "no-constructor"})
}

// TestCheckpointVersionIsNotANumber: the weight version of a loaded
// checkpoint is "checkpoint:" and its path, which no training run's
// version (a number) can be.
func TestCheckpointVersionIsNotANumber(t *testing.T) {
	if got, want := CheckpointVersion("/models/ckpt"), "checkpoint:/models/ckpt"; got != want {
		t.Errorf("CheckpointVersion = %q, want %q", got, want)
	}
}

// TestServersEngineTakesTheConfig: the server engine New makes is a Client
// of the config's protocol and servers that sends rollout_engine_batch
// sequences a request, told of the workers it takes out through Warn.
func TestServersEngineTakesTheConfig(t *testing.T) {
	var warned []string
	eng, err := New(Config{Name: SGLang, URLs: []string{"http://a:1/"}, Batch: 3, Warn: func(m string) { warned = append(warned, m) }},
		Policy{Vocab: 10, Checkpoint: "ckpt"})
	if err != nil {
		t.Fatal(err)
	}
	c, ok := eng.(*Client)
	if !ok {
		t.Fatalf("New = %T, want a *Client", eng)
	}
	if c.opt.Protocol != SGLang || !slices.Equal(c.opt.URLs, []string{"http://a:1"}) || c.opt.Batch != 3 || c.opt.Weights == nil || c.opt.Weights.Checkpoint != "ckpt" {
		t.Errorf("client options %+v", c.opt)
	}
	if c.opt.Weights.Warn == nil {
		t.Fatal("the client's weights have no Warn")
	}
	c.opt.Weights.Warn("w")
	if !slices.Equal(warned, []string{"w"}) {
		t.Errorf("Warn reached the config's Warn with %q", warned)
	}
}
