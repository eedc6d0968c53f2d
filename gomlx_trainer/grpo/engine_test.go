package grpo

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/gomlx_trainer/serve"
)

// TestServerRunEqualsInProcessRun trains three rollouts of the tiny policy
// on arithmetic (no tools, so each sample is one turn) twice: in process,
// and with rollout_engine sglang against one `mathrl serve` worker on
// loopback, sent each turn as one batch request, the trainer pushing its
// weights to the worker before every rollout (weights_dir, the worker's
// weights root), with the worker's API key (which no file of the run nor its
// log holds). Every rollout's
// records (ids, log-probs, masks, advantages) and the trained weights are the
// same, byte for byte: the protocol and the weight push lose nothing.
func TestServerRunEqualsInProcessRun(t *testing.T) {
	base := smokeConfig(t)
	base.NumRollout, base.SFTSteps, base.UseTools, base.EvalPromptData = 3, 0, false, ""
	base.SaveRolloutsEvery = 1
	serverRunEqualsInProcessRun(t, base)
}

// TestAsyncServerRunEqualsInProcessRun is TestServerRunEqualsInProcessRun
// with async_rollouts (and an entropy bonus, so that every step changes the
// weights): the in-process engine samples from its copy of the weights, the
// server from the weights pushed to it, each rollout after the first one
// rollout's updates old, and the two runs are the same byte for byte.
func TestAsyncServerRunEqualsInProcessRun(t *testing.T) {
	base := smokeConfig(t)
	base.NumRollout, base.SFTSteps, base.UseTools, base.EvalPromptData = 3, 0, false, ""
	base.SaveRolloutsEvery, base.AsyncRollouts, base.EntropyCoef = 1, true, 0.01
	serverRunEqualsInProcessRun(t, base)
}

// serverRunEqualsInProcessRun trains base in process and through one
// `mathrl serve` worker, and requires the same records and weights.
func serverRunEqualsInProcessRun(t *testing.T, base Config) {

	inProcess := base
	inProcess.Save = filepath.Join(t.TempDir(), "builtin")
	var log bytes.Buffer
	if err := Train(context.Background(), inProcess, TrainOptions{Backend: testBackend(t), Progress: &log}); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}

	// the worker serves the run's initial policy: the tiny model at the run's seed
	mc, err := qwen3.NamedConfig(base.TinyModel)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "policy")
	if err := qwen3.WriteRandom(mc, dir, "F32", uint64(base.Seed)); err != nil {
		t.Fatal(err)
	}
	const key = "k3y-of-the-server"
	weights := filepath.Join(t.TempDir(), "weights")
	if err := os.MkdirAll(weights, 0o755); err != nil {
		t.Fatal(err)
	}
	srv, err := serve.New(serve.Options{Backend: testBackend(t), ModelPath: dir, DType: dtypes.Float32, MaxBatch: 4,
		APIKey: key, WeightsRoot: weights})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	defer func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()

	remote := base
	remote.Save = filepath.Join(t.TempDir(), "sglang")
	remote.RolloutEngine, remote.RolloutEngineURLs, remote.RolloutEngineBatch = "sglang", []string{"http://" + ln.Addr().String()}, 1024
	remote.RolloutEngineAPIKey, remote.WeightsDir = key, weights
	log.Reset()
	if err := Train(context.Background(), remote, TrainOptions{Backend: testBackend(t), Progress: &log}); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	noKeyIn(t, key, log.String(), remote.Save, weights)

	files := []string{filepath.Join("ckpt", CheckpointName(base.NumRollout*base.StepsPerRollout()), "model.safetensors")}
	for r := range base.NumRollout {
		files = append(files, filepath.Join("rollouts", CheckpointName(r*base.StepsPerRollout())+".jsonl"))
	}
	for _, f := range files {
		a, errA := os.ReadFile(filepath.Join(inProcess.Save, f))
		b, errB := os.ReadFile(filepath.Join(remote.Save, f))
		if errA != nil || errB != nil {
			t.Fatalf("%s: %v, %v", f, errA, errB)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between the in-process run and the run through the server", f)
		}
	}
}
