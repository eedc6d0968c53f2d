package grpo

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/engine"
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
	url := serveOnLoopback(t, serve.Options{Backend: testBackend(t), ModelPath: dir, DType: dtypes.Float32, MaxBatch: 4,
		APIKey: key, WeightsRoot: weights})

	remote := base
	remote.Save = filepath.Join(t.TempDir(), "sglang")
	remote.RolloutEngine, remote.RolloutEngineURLs, remote.RolloutEngineBatch = "sglang", []string{url}, 1024
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

	// the server compiles out of sight: the run through it cannot say what
	// its rollouts compiled, only what its steps did
	steps, err := RunFolder(remote.Save).ReadSteps(1 << 30)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range steps {
		if m.RolloutCompiles != nil || m.RolloutCompileSeconds != nil || m.TrainCompiles == nil || m.TrainCompileSeconds == nil {
			t.Errorf("run through the server, step %d: rollout compiles %v in %v s (want unknown), train %v in %v s (want known)", m.Step,
				deref(m.RolloutCompiles), deref(m.RolloutCompileSeconds), deref(m.TrainCompiles), deref(m.TrainCompileSeconds))
		}
	}
}

// TestServedEvalEqualsInProcessEval evaluates one checkpoint twice, as
// `mathrl eval` does: in process, and with rollout engine sglang against a
// `mathrl serve` worker started from other weights, each batch sent as one
// request. The eval has the worker load the checkpoint first, so the two
// samples files are the same byte for byte, the worker then reports the
// checkpoint's weight version, and the other weights' own samples differ
// (the comparison can tell the two models apart).
func TestServedEvalEqualsInProcessEval(t *testing.T) {
	mc, err := qwen3.NamedConfig("tiny")
	if err != nil {
		t.Fatal(err)
	}
	ckpt, other := filepath.Join(t.TempDir(), "ckpt"), filepath.Join(t.TempDir(), "other")
	if err := qwen3.WriteRandom(mc, ckpt, "F32", 1); err != nil {
		t.Fatal(err)
	}
	if err := qwen3.WriteRandom(mc, other, "F32", 2); err != nil {
		t.Fatal(err)
	}
	url := serveOnLoopback(t, serve.Options{Backend: testBackend(t), ModelPath: other, DType: dtypes.Float32, MaxBatch: 8})

	req := DefaultEvalRequest()
	req.Model, req.Data, req.MaxPrompts, req.K, req.Budget = ckpt, "arith", 3, 2, 12
	req.Tokenizer, req.BatchSize, req.Temperature, req.TopP = "bytes", 4, 1, 1
	eval := func(name string, r EvalRequest) []byte {
		r.Out = filepath.Join(t.TempDir(), name+".jsonl")
		if _, err := RunEval(context.Background(), testBackend(t), r); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		data, err := os.ReadFile(r.Out)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	inProcess := eval("builtin", req)
	served := req
	served.Engine, served.EngineURLs, served.EngineBatch = "sglang", []string{url}, 64
	if got := eval("sglang", served); !bytes.Equal(got, inProcess) {
		t.Errorf("the samples through the server differ from the in-process ones:\n%s\nwant\n%s", got, inProcess)
	}
	abs, err := filepath.Abs(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	if _, info := getBody(t, url+"/get_model_info"); !strings.Contains(info, `"weight_version":"`+engine.CheckpointVersion(abs)+`"`) {
		t.Errorf("the worker reports %s after the eval, want the checkpoint's version", info)
	}
	otherReq := req
	otherReq.Model = other
	if bytes.Equal(bytes.ReplaceAll(eval("other", otherReq), []byte(other), []byte(ckpt)), inProcess) {
		t.Error("the other weights sample what the checkpoint does: the test cannot tell them apart")
	}
}

// serveOnLoopback runs `mathrl serve` with opt on a loopback port until the
// test ends, and returns its base URL.
func serveOnLoopback(t *testing.T, opt serve.Options) string {
	t.Helper()
	srv, err := serve.New(opt)
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
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

// getBody is the status and body of GET url.
func getBody(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}
