package memplan_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/backend"
	"github.com/mathrl/mathrl/gomlx_trainer/backend/backendtest"
	"github.com/mathrl/mathrl/gomlx_trainer/grpo"
	"github.com/mathrl/mathrl/gomlx_trainer/layout"
	"github.com/mathrl/mathrl/gomlx_trainer/memplan"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
)

// measureEnv, set in a child test process, makes TestShardedPeakOnXLA run one
// measured step (see measureShardedStep) instead of the comparison.
const measureEnv = "MATHRL_MEMPLAN_MEASURE"

// The measured models are float32, with 4 query and 2 key/value heads.
// vocabHeavy's [16384, 256] embedding is 78% of its 5.4M parameters;
// layerHeavy's 4 decoder layers are 94% of its 16.8M. At 4 rows of 64 tokens
// the state (16 bytes a parameter) and the weight gradients the collective
// holds dominate a device's peak, and fsdp changes both: in vocabHeavy what
// stays split on the vocabulary (the embedding, the head and its gradient),
// in layerHeavy what is gathered (one layer's weights at a time).
var vocabHeavy, layerHeavy = shardedModel{256, 2, 16384, 512}, shardedModel{512, 4, 2048, 2048}

// shardedModel is a measured model's hidden size, layers, vocabulary and
// intermediate size.
type shardedModel struct{ hidden, layers, vocab, inter int }

func (m shardedModel) config() qwen3.Config { return shape(m.hidden, m.layers, m.vocab, m.inter, 4, 2) }

const shardedRows, shardedPrompt, shardedResponse = 4, 30, 30

// TestShardedPeakOnXLA runs an optimizer step of vocabHeavy and layerHeavy
// over 2 and 4 of XLA's CPU devices (sharding data, and fsdp) and compares the first device's
// peak with TrainStep's per-device prediction under the XLA rules, within
// tolerance. The measured peak is what XLA itself reports:
//
//   - what the device holds between steps: the bytes of its shards of every
//     variable of the store after the step (weights, gradient accumulators,
//     AdamW moments and step), as dtensor holds them;
//   - plus, of each program the step runs (the micro-batch's accumulation,
//     the AdamW update), the largest temporary buffer XLA's buffer assignment
//     gives the per-device program the SPMD partitioner made (its
//     preallocated-temp, constant and thread-local allocations, from
//     --xla_dump_to).
//
// The programs' outputs count: GoMLX v0.28.2 declares no input/output
// aliasing to XLA, so each update holds a fresh copy of what it updates
// beside the donated old values, and the plan counts it (OptimizerUpdate).
// XLA reads XLA_FLAGS once per process, so each step runs in a child process
// of its own.
func TestShardedPeakOnXLA(t *testing.T) {
	if spec := os.Getenv(measureEnv); spec != "" {
		measureShardedStep(t, spec)
		return
	}
	if testing.Short() {
		t.Skip("compiles and runs a training step on several XLA CPU devices")
	}
	if k := backendtest.Kind(); k != backend.XLACPU {
		t.Skipf("several devices need XLA: %s=%s, not %s", backendtest.KindEnv, k, backend.XLACPU)
	}
	backendtest.XLACPUPlugin(t)
	for _, tc := range []struct {
		model    shardedModel
		sharding string
		devices  int
	}{
		{vocabHeavy, layout.Data, 2}, {vocabHeavy, layout.Data, 4},
		{vocabHeavy, layout.FSDP, 4}, {layerHeavy, layout.FSDP, 2}, {layerHeavy, layout.FSDP, 4},
	} {
		t.Run(fmt.Sprintf("%d layers, vocabulary %d, %s on %d devices", tc.model.layers, tc.model.vocab, tc.sharding, tc.devices), func(t *testing.T) {
			step := memplan.Step{DType: dtypes.Float32, Rows: shardedRows, SeqLen: layout.PadLength(shardedPrompt + shardedResponse),
				Devices: tc.devices, FSDP: tc.sharding == layout.FSDP}
			want := memplan.TrainStep(tc.model.config(), step, memplan.XLA)
			m := runMeasurement(t, tc.model, tc.sharding, tc.devices)
			t.Logf("resident %.1f MB (plan %.1f); largest temporaries %.1f MB, with the outputs written anew %.1f MB",
				float64(m.Resident)/1e6, float64(residentOf(want))/1e6, float64(m.Temp)/1e6, float64(m.Fresh)/1e6)
			report(t, m.Resident+m.Fresh, want)
		})
	}
}

// residentOf is the bytes of a breakdown's resident terms.
func residentOf(b memplan.Breakdown) int64 {
	return b.Term(memplan.TermWeights) + b.Term(memplan.TermAccumulators) + b.Term(memplan.TermMoments) + b.Term(memplan.TermMaster)
}

// measured is what a child process reports of one step's first device.
type measured struct {
	Resident int64 // its shards of the store's variables
	Temp     int64 // the largest temporaries of a program of the step
	Fresh    int64 // the largest temporaries and outputs of a program (the updated variables written anew)
}

// runMeasurement runs measureShardedStep in a child process and reads its
// result and XLA's dump.
func runMeasurement(t *testing.T, model shardedModel, sharding string, n int) measured {
	dir := t.TempDir()
	m := runChild(t, "TestShardedPeakOnXLA", dir, fmt.Sprintf("%s=%s %d %s %d %d %d %d", measureEnv, sharding, n, dir,
		model.hidden, model.layers, model.vocab, model.inter))
	m.Temp, m.Fresh = largestTemporaries(t, filepath.Join(dir, "dump"))
	return m
}

// runChild runs the test named test in a child process with env set and
// XLA's dump in dir/dump, and reads the measured it wrote to dir
// (writeMeasured). XLA reads XLA_FLAGS once per process.
func runChild(t *testing.T, test, dir, env string) measured {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.v")
	cmd.Env = append(os.Environ(), env,
		"XLA_FLAGS="+strings.TrimSpace(os.Getenv("XLA_FLAGS")+" --xla_dump_to="+filepath.Join(dir, "dump")))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("measuring in a child process (%s): %v\n%s", env, err, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "resident.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m measured
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// writeMeasured writes m to dir for runChild.
func writeMeasured(t *testing.T, dir string, m measured) {
	t.Helper()
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "resident.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// measureShardedStep runs, in the child process, two optimizer steps as spec
// ("sharding devices dir hidden layers vocab inter") says and writes the
// first device's shards of the store's variables to dir/resident.json.
func measureShardedStep(t *testing.T, spec string) {
	var sharding, dir string
	var n int
	var shape shardedModel
	if _, err := fmt.Sscanf(spec, "%s %d %s %d %d %d %d", &sharding, &n, &dir, &shape.hidden, &shape.layers, &shape.vocab, &shape.inter); err != nil {
		t.Fatalf("%s=%q: %v", measureEnv, spec, err)
	}
	b, _, err := backend.New(backend.Options{Kind: backend.XLACPU, PJRTPlugin: backendtest.XLACPUPlugin(t), NumDevices: n})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Finalize()
	cfg := shape.config()
	model, err := qwen3.NewRandom(cfg, dtypes.Float32, 1)
	if err != nil {
		t.Fatal(err)
	}
	l := grpo.NewLearner(b, model, grpo.LossConfig{EpsLow: 0.2, EpsHigh: 0.28}, grpo.AdamWConfig{Beta1: 0.9, Beta2: 0.98, Eps: 1e-8, ClipNorm: 1}, 1)
	if err := l.Shard(n, sharding); err != nil {
		t.Fatal(err)
	}
	seqs := sequences(rand.New(rand.NewPCG(1, 2)), shardedRows, shardedPrompt, shardedResponse, cfg.VocabSize)
	for range 2 {
		if _, _, err := l.Step(seqs, grpo.StepOptions{MicroBatch: shardedRows, PerTokenLoss: true, LR: 1e-6}); err != nil {
			t.Fatal(err)
		}
	}
	var m measured
	for v := range model.Store.IterVariables() {
		dv, err := v.DistributedValue()
		if err != nil {
			t.Fatal(err)
		}
		m.Resident += int64(dv.Shards()[0].Shape().Memory())
	}
	writeMeasured(t, dir, m)
}

// allocationLine is the head of an allocation in XLA's buffer assignment:
// "allocation 3: size 524288, page 0, maybe-live-out:".
var allocationLine = regexp.MustCompile(`^allocation \d+: size (\d+), (.*)$`)

// largestTemporaries reads XLA's buffer assignments of the compiled programs
// in dir (all but the variables' initialisation) and returns the largest sum
// of a program's allocations that are neither parameters nor outputs, and
// the largest with its outputs.
func largestTemporaries(t *testing.T, dir string) (temp, withOutputs int64) {
	files, err := filepath.Glob(filepath.Join(dir, "*cpu_after_optimizations-buffer-assignment.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no buffer assignment dumped in %s (%v)", dir, err)
	}
	for _, f := range files {
		if strings.Contains(filepath.Base(f), "VariableInitialization") {
			continue
		}
		tmp, out := allocations(t, f)
		temp, withOutputs = max(temp, tmp), max(withOutputs, tmp+out)
	}
	return temp, withOutputs
}

// allocations sums a buffer assignment's allocations: those that are neither
// parameters nor outputs, and the outputs.
func allocations(t *testing.T, path string) (temp, outputs int64) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		m := allocationLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		size, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		switch kind := m[2]; {
		case strings.Contains(kind, "parameter"):
		case strings.Contains(kind, "live-out"):
			outputs += size
		default:
			temp += size
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return temp, outputs
}
