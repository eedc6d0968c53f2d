package memplan

import (
	"github.com/gomlx/compute/dtypes"

	"github.com/mathrl/mathrl/gomlx_trainer/layout"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/gomlx_trainer/sampler"
)

// Session is the shape of one sampling session (sampler.Session).
type Session struct {
	DType         dtypes.DType // compute dtype of the weights and the cache
	Batch         int          // sequences generated at once
	PromptLen     int          // longest prompt
	ResponseLen   int          // most new tokens per sequence (sampled and appended)
	MaxChunk      int          // most prompt tokens prefilled in one step; 0: sampler.DefaultMaxChunk
	AppendChunk   int          // most appended tokens fed per sequence in one step; 0: sampler.DefaultAppendChunk
	AppendChunks  bool         // tool outputs are appended between turns: chunks of AppendChunk fed at the full cache
	Training      bool         // inside `mathrl train`: the optimizer state stays resident (Resident) unless State.OffloadTrain
	Reference     bool         // with Training, a frozen reference policy is resident too
	TeacherParams int64        // with Training, an in-process distillation teacher of this many parameters is resident too
	Devices       int          // with Training, num_devices the trainer's state spreads over; 0 or 1: one device
	FSDP          bool         // with Training and Devices > 1: sharding fsdp, else data
	State         State        // with Training, how the optimizer keeps its state
	// Sampler, with Training, is the shape of the model that samples when it
	// is not the policy (distill_mode sft's teacher, resident as
	// TeacherParams): its key/value cache and steps; nil: the policy's.
	Sampler *qwen3.Config
}

// Names of the sampling terms (the resident ones are those of Resident).
const (
	TermCache  = "key/value cache"
	TermStep   = "step working set"
	TermGrowth = "cache growth"
	TermCopy   = "prompt copy"
)

// Sampling returns the peak of a sampling session under rules r. The cache
// grows with the sequences (sampler.CacheBucket), so the phases are:
//
//	prefill: resident + cache at the prompt's slots + a prompt's prefix (one row:
//	         a prompt is prefilled alone, sampler.Start) + a step of its first chunk on that row
//	copy:    resident + cache at the prompt's slots + the prefix + the prefix
//	         broadcast to the rows it is copied into (every row, at worst) of one
//	         layer's key or value tensor; on CPU, plus that tensor's new copy (the Go
//	         backend's scatter writes a new tensor)
//	decode:  resident + cache at the final slots + a step of one token (or, with
//	         AppendChunks, of AppendChunk appended tokens)
//	growth:  resident + cache at the final slots + one layer's key or value tensor
//	         at its previous length (the cache is grown one tensor at a time)
//
// The cache and the steps are those of s.Sampler when it is set (a teacher
// sampling the rollouts), else of cfg.
//
// Resident is the weights, or with Training what samplingResident keeps (on
// the CPU in a SIMD build, plus matmulWorkspace). On several devices the
// sampler runs on the trainer's mesh with its batch split (sampler.OnMesh:
// the batch padded to a multiple of the devices), so the cache and the step are those of one
// device's rows; under fsdp it is taken to read the weights whole, a gathered
// copy (P·d) beside that device's shards (an upper bound: XLA may gather them
// a layer at a time, as it does in the training step).
func Sampling(cfg qwen3.Config, s Session, r Rules) Breakdown {
	if s.Training && s.Devices > 1 {
		s.Batch = layout.RowsPerDevice(s.Batch, s.Devices)
	}
	weights := cfg.Params() * int64(s.DType.Size())
	resident := []Term{{TermWeights, weights}}
	if s.Training {
		resident = samplingResident(cfg, s)
		if s.FSDP && s.Devices > 1 {
			resident = append(resident, Term{TermGathered, weights})
		}
	}
	if s.Training && s.Sampler != nil { // the resident terms are the policy's; the cache and steps the sampler's
		cfg = *s.Sampler
	}
	maxChunk, appendChunk := s.MaxChunk, s.AppendChunk
	if maxChunk <= 0 {
		maxChunk = sampler.DefaultMaxChunk
	}
	if appendChunk <= 0 {
		appendChunk = sampler.DefaultAppendChunk
	}
	capacity := sampler.DefaultCapacity(s.PromptLen + s.ResponseLen)
	first := sampler.CacheBucket(s.PromptLen, capacity)
	final := sampler.CacheBucket(s.PromptLen+s.ResponseLen, capacity)
	prefixLen := max(s.PromptLen-1, 1) // a prompt's tokens but its last
	prefixSlots := sampler.CacheBucket(prefixLen, capacity)
	prefill := min(sampler.ChunkBucket(min(prefixLen, maxChunk)), prefixSlots)
	alone := s
	alone.Batch = 1 // one row per device
	decode := 1
	if s.AppendChunks {
		decode = min(sampler.ChunkBucket(appendChunk), final)
	}
	ws := matmulWorkspace(int64(s.DType.Size()), r,
		linearProduct(cfg, 1, prefill), attentionProduct(cfg, 1, prefill, prefixSlots),
		linearProduct(cfg, s.Batch, decode), attentionProduct(cfg, s.Batch, decode, final))
	resident = append(resident, Term{TermWorkspace, ws})
	cache := func(slots int) []Term { return []Term{{TermCache, kvCache(cfg, s, slots)}} }
	withPrefix := []Term{{TermCache, kvCache(cfg, s, first) + kvCache(cfg, alone, prefixSlots)}}
	tensors := int64(2 * cfg.Layers)
	copied := kvCache(cfg, s, prefixSlots) / tensors
	if r == CPU {
		copied += kvCache(cfg, s, first) / tensors
	}
	return peak(
		with("prefill", resident, withPrefix, []Term{{TermStep, stepWorkingSet(cfg, alone, prefill, prefixSlots, r)}}),
		with("prompt copy", resident, withPrefix, []Term{{TermCopy, copied}}),
		with("decode", resident, cache(final), []Term{{TermStep, stepWorkingSet(cfg, s, decode, final, r)}}),
		with("cache growth", resident, cache(final), []Term{{TermGrowth, kvCache(cfg, s, final) / int64(2*cfg.Layers)}}),
	)
}

// samplingResident is what a training run keeps on the device while it
// samples: Sharded without the gradient accumulators, which on one device
// exist only inside a step (grpo.Learner frees them after each), and with
// State.OffloadTrain on one device not the rest of the optimizer state
// either (grpo.Learner.OffloadState): only the weights, the reference and
// the teacher.
func samplingResident(cfg qwen3.Config, s Session) []Term {
	var out []Term
	one := s.Devices <= 1
	for _, t := range withTeacher(Sharded(cfg, s.DType, s.Reference, s.Devices, s.FSDP, s.State), s.TeacherParams, s.DType) {
		switch {
		case t.Name == TermAccumulators && one:
		case (t.Name == TermMoments || t.Name == TermMaster) && one && s.State.OffloadTrain:
		default:
			out = append(out, t)
		}
	}
	return out
}

// kvCache is the key/value cache of Batch sequences at slots positions:
// a key and a value tensor per layer, each [Batch, KVHeads, slots, HeadDim]
// in the compute dtype (qwen3.Config.CacheShapes): 2·L·Batch·KVHeads·slots·HeadDim·d.
func kvCache(cfg qwen3.Config, s Session, slots int) int64 {
	return 2 * int64(cfg.Layers) * int64(s.Batch) * int64(cfg.KVHeads) * int64(slots) * int64(cfg.HeadDim) * int64(s.DType.Size())
}

// stepWorkingSet is what one step of qwen3.Extend holds beyond the cache, for
// chunk tokens per sequence over slots cache positions: the larger of a
// layer's attention and its MLP, plus the logits and the sampler's [Batch,
// Vocab] float32 tensors (3 of them). With E = Batch·Heads·chunk·slots scores:
//
//   - attention, XLA: E·(2d + 4) (E·8 in float32): the scores from the matmul,
//     the float32 softmax and the probabilities in the compute dtype; plus the
//     chunk's residual, normalised input, q, k and v: Batch·chunk·(2H + q + 2kv)·d.
//   - attention, CPU: E·9: the float32 scores, their masked copy and the
//     boolean mask broadcast to every score; the [Batch, chunk, slots] visibility
//     mask; the copies of one layer's keys and values that the matmuls make
//     (blocked for a large product, or the values transposed to contract over
//     the slots): the cache over L; the same token tensors.
//   - MLP: Batch·chunk·(2H + 3I)·d (XLA: residual, normalised input, gate, up and
//     their product) or (2H + 4I)·d (CPU: sigmoid(gate) too).
func stepWorkingSet(cfg qwen3.Config, s Session, chunk, slots int, r Rules) int64 {
	d := int64(s.DType.Size())
	h, i := int64(cfg.Hidden), int64(cfg.Intermediate)
	q, kv := int64(cfg.Heads*cfg.HeadDim), int64(cfg.KVHeads*cfg.HeadDim)
	bc := int64(s.Batch) * int64(chunk)
	e := bc * int64(cfg.Heads) * int64(slots)
	attention := bc * (2*h + q + 2*kv) * d
	mlp := bc * (2*h + 3*i) * d
	if r == XLA {
		attention += e * (4 + 2*d)
		if d == 4 {
			attention -= e * 4 // the probabilities are the softmax's own output
		}
	} else {
		attention += e*9 + bc*int64(slots) + kvCache(cfg, s, slots)/int64(cfg.Layers)
		mlp += bc * i * d
	}
	return max(attention, mlp) + 3*4*int64(s.Batch)*int64(cfg.VocabSize)
}
