package runs

import "fmt"

// The names in a run folder, as `mathrl train --save DIR` writes it and
// every analysis reads it:
//
//	config.json          the resolved recipe
//	provenance.json      code version, Go and module versions, backend, device, seeds
//	train.jsonl          one metrics.StepMetrics line per optimizer step
//	eval.jsonl           one metrics.EvalPoint line per evaluation
//	samples/             eval samples (metrics.Sample JSONL), step-NNNNNN.jsonl
//	rollouts/            records of the training samples token by token (rollouts.Record JSONL), step-NNNNNN.jsonl
//	ckpt/                checkpoints, step-NNNNNN/ (Hugging Face folders + optimizer and trainer state)
//	weights/             the policy a run that samples on servers writes for them to load
//	figures/             training curves, training_NAME.{png,svg}
//	final_samples.jsonl  an ablation run's last evaluation samples (scripts/ablation.sh moves them there)
const (
	ConfigFile       = "config.json"
	ProvenanceFile   = "provenance.json"
	StepsFile        = "train.jsonl"
	EvalsFile        = "eval.jsonl"
	SamplesDir       = "samples"
	RolloutsDir      = "rollouts"
	CkptDir          = "ckpt"
	WeightsDir       = "weights"
	FiguresDir       = "figures"
	FinalSamplesFile = "final_samples.jsonl"
	// DiversitySamplesFile is an ablation run's final policy sampled again,
	// many answers per evaluation problem (scripts/objectives.sh).
	DiversitySamplesFile = "diversity_samples.jsonl"
)

// StepName names what a run writes after step optimizer steps: step-NNNNNN,
// a checkpoint folder, and with .jsonl the samples and rollout records of
// that step.
func StepName(step int) string { return fmt.Sprintf("step-%06d", step) }
