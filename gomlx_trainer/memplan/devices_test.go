package memplan_test

import (
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/layout"
	"github.com/mathrl/mathrl/gomlx_trainer/memplan"
)

// TestShardedByHand: 4 rows on 2 devices are 2 rows each, so data on 2
// devices holds the whole state and the activations of TestTrainStepByHand's
// rows/2, and fsdp holds 1/2 of the state plus the other half of one decoder
// layer's weights gathered, (P − V·H)/L·d/2 = 158·4/2; both also pass through
// the end of the backward, every weight gradient alive for the collective,
// (P + 2·V·H)·d = (356 + 80)·4, under fsdp half of it. Sampling on the
// devices splits the batch.
func TestShardedByHand(t *testing.T) {
	cfg := handConfig()
	one := memplan.TrainStep(cfg, memplan.Step{DType: dtypes.Float32, Rows: 2, SeqLen: 5}, memplan.XLA)
	for _, fsdp := range []bool{false, true} {
		got := memplan.TrainStep(cfg, memplan.Step{DType: dtypes.Float32, Rows: 4, SeqLen: 5, Devices: 2, FSDP: fsdp}, memplan.XLA)
		state, gathered := int64(16*356), int64(0)
		if fsdp {
			state, gathered = 8*356, 2*158
		}
		resident := got.Term(memplan.TermWeights) + got.Term(memplan.TermAccumulators) + got.Term(memplan.TermMoments)
		if resident != state || got.Term(memplan.TermGathered) != gathered {
			t.Errorf("fsdp %v: resident %d gathered %d, want %d and %d (%+v)", fsdp, resident, got.Term(memplan.TermGathered), state, gathered, got)
		}
		if got.Phase == "end of backward" {
			if want := int64((356 + 80) * 4); (!fsdp && got.Term(memplan.TermGradients) != want) || (fsdp && got.Term(memplan.TermGradients) != want/2) {
				t.Errorf("fsdp %v: %+v", fsdp, got)
			}
		} else if got.Term(memplan.TermLayers) != one.Term(memplan.TermLayers) {
			t.Errorf("fsdp %v: activations %d, want those of 2 rows on one device, %d", fsdp, got.Term(memplan.TermLayers), one.Term(memplan.TermLayers))
		}
	}
	s := memplan.Session{DType: dtypes.Float32, Batch: 4, PromptLen: 100, ResponseLen: 60, Training: true, Devices: 2, FSDP: true}
	if got := memplan.Sampling(cfg, s, memplan.XLA); got.Term(memplan.TermGathered) != 4*356 || got.Term(memplan.TermMoments) != 4*356 {
		t.Errorf("fsdp sampling: %+v, want the whole weights gathered beside half the moments", got)
	}
	// The sampler's batch is split over the devices: 5 sequences on 2 are 3
	// rows a device (the batch padded to 6), the cache of 3 sequences.
	for _, fsdp := range []bool{false, true} {
		split := memplan.Sampling(cfg, memplan.Session{DType: dtypes.Float32, Batch: 5, PromptLen: 100, ResponseLen: 60, Training: true, Devices: 2, FSDP: fsdp}, memplan.XLA)
		alone := memplan.Sampling(cfg, memplan.Session{DType: dtypes.Float32, Batch: 3, PromptLen: 100, ResponseLen: 60}, memplan.XLA)
		if split.Term(memplan.TermCache) != alone.Term(memplan.TermCache) || split.Term(memplan.TermStep) != alone.Term(memplan.TermStep) {
			t.Errorf("fsdp %v: cache %d and step %d on each of 2 devices, want those of 3 sequences on one, %d and %d", fsdp,
				split.Term(memplan.TermCache), split.Term(memplan.TermStep), alone.Term(memplan.TermCache), alone.Term(memplan.TermStep))
		}
	}
}

// TestCheckDevices: each bad setting is one error naming its flag, the value
// and what would work.
func TestCheckDevices(t *testing.T) {
	cfg := handConfig() // largest axes: 10 (embedding), 8 (MLP), 4 (norms, attention), 2 (head norms): gcd 2
	ok := memplan.Recipe{DType: dtypes.Float32, GlobalBatch: 8, MicroBatch: 4, Devices: 2, Sharding: layout.FSDP}
	if err := ok.CheckDevices(cfg, memplan.XLA); err != nil {
		t.Fatalf("2 devices under fsdp: %v", err)
	}
	packed := ok
	packed.MaxTokens, packed.PromptLen, packed.ResponseLen = 192, 30, 30 // 3 rows of 64 tokens, padded to 4
	if err := packed.CheckDevices(cfg, memplan.XLA); err != nil {
		t.Errorf("micro-batches packed by tokens are padded to split: %v", err)
	}
	three := memplan.TrainStep(cfg, memplan.Step{DType: dtypes.Float32, Rows: 3, SeqLen: 5, Devices: 2}, memplan.XLA)
	two := memplan.TrainStep(cfg, memplan.Step{DType: dtypes.Float32, Rows: 2, SeqLen: 5}, memplan.XLA)
	if three.Term(memplan.TermLayers) != two.Term(memplan.TermLayers) {
		t.Errorf("3 rows padded over 2 devices: activations %d, want those of 2 rows, %d", three.Term(memplan.TermLayers), two.Term(memplan.TermLayers))
	}
	for _, tc := range []struct {
		name string
		edit func(*memplan.Recipe)
		r    memplan.Rules
		want string
	}{
		{"rows", func(rc *memplan.Recipe) { rc.MicroBatch = 3 }, memplan.XLA, "--micro-batch-size): 3 rows per micro-batch do not split over num_devices (--devices) 2; want a multiple of 2"},
		{"axis", func(rc *memplan.Recipe) { rc.Devices, rc.MicroBatch = 4, 4 }, memplan.XLA, "sharding (--sharding) fsdp: model.embed_tokens.weight [10 4] does not split over num_devices (--devices) 4 along its largest axis; " +
			"num_devices (--devices) must divide every variable's largest axis (here 1 or 2), or use sharding (--sharding) data"},
		{"sharding", func(rc *memplan.Recipe) { rc.Sharding = "zero" }, memplan.XLA, `--sharding): "zero" is not replicate, data or fsdp`},
		{"replicate", func(rc *memplan.Recipe) { rc.Sharding = layout.Replicate }, memplan.XLA, "runs on one device, but num_devices (--devices) is 2; set sharding (--sharding) data or fsdp"},
		{"cpu rules", func(rc *memplan.Recipe) {}, memplan.CPU, "(--devices): 2 under the cpu rules"},
	} {
		rc := ok
		tc.edit(&rc)
		if err := rc.CheckDevices(cfg, tc.r); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

// TestReferenceWholeUnderFSDP: the frozen reference policy of the KL
// penalty stays whole on the first device (grpo.Learner.Shard leaves it
// there), P·d = 356·4 bytes on 1, 2 or 4 devices under data or fsdp, in a
// training step as while sampling; fsdp splits the policy's own weights,
// P·d/devices.
func TestReferenceWholeUnderFSDP(t *testing.T) {
	const whole = 356 * 4
	for _, tc := range []struct {
		devices int
		fsdp    bool
		weights int64
	}{{1, false, whole}, {2, false, whole}, {2, true, whole / 2}, {4, true, whole / 4}} {
		step := memplan.TrainStep(handConfig(), memplan.Step{DType: dtypes.Float32, Rows: 4, SeqLen: 5, Reference: true,
			Devices: tc.devices, FSDP: tc.fsdp}, memplan.XLA)
		sampling := memplan.Sampling(handConfig(), memplan.Session{DType: dtypes.Float32, Batch: 4, PromptLen: 100, ResponseLen: 60,
			Training: true, Reference: true, Devices: tc.devices, FSDP: tc.fsdp}, memplan.XLA)
		for what, b := range map[string]memplan.Breakdown{"train step": step, "sampling": sampling} {
			if b.Term(memplan.TermReference) != whole || b.Term(memplan.TermWeights) != tc.weights {
				t.Errorf("%d devices, fsdp %v, %s: reference %d and weights %d bytes, want %d and %d",
					tc.devices, tc.fsdp, what, b.Term(memplan.TermReference), b.Term(memplan.TermWeights), whole, tc.weights)
			}
		}
	}
}

// TestTeacherCounted: an in-process distillation teacher of T parameters
// adds T·d bytes, whole on the first device, to a training step and to
// sampling, beside the policy's weights; none without one.
func TestTeacherCounted(t *testing.T) {
	const teacher = 1000
	for _, tc := range []struct {
		devices int
		fsdp    bool
	}{{1, false}, {2, true}} {
		for _, params := range []int64{0, teacher} {
			step := memplan.TrainStep(handConfig(), memplan.Step{DType: dtypes.BFloat16, Rows: 4, SeqLen: 5, TeacherParams: params,
				Devices: tc.devices, FSDP: tc.fsdp}, memplan.XLA)
			sampling := memplan.Sampling(handConfig(), memplan.Session{DType: dtypes.BFloat16, Batch: 4, PromptLen: 100, ResponseLen: 60,
				Training: true, TeacherParams: params, Devices: tc.devices, FSDP: tc.fsdp}, memplan.XLA)
			for what, b := range map[string]memplan.Breakdown{"train step": step, "sampling": sampling} {
				if got := b.Term(memplan.TermTeacher); got != params*2 {
					t.Errorf("%d devices, fsdp %v, %s: teacher of %d parameters counted %d bytes, want %d", tc.devices, tc.fsdp, what, params, got, params*2)
				}
			}
		}
	}
}
