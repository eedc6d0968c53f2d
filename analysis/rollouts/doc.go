// Package rollouts owns the token-level record of training rollouts, the file
// rollouts/step-NNNNNN.jsonl of a run folder (Record, one line per sample),
// and its views: an HTML page that shows each sample token by token (the loss
// mask, the advantage and the sampling log-prob of every token, the reward and
// the scorer's verdict) and per-step statistics of masks and advantages.
//
// The trainer writes the records from the very arrays its loss takes (the
// mask and old log-probs of each sequence after every correction, and its
// advantage), so that the page answers "what exactly did the model see, and
// what did it get credit for?" from the truth, not from a recomputation. The
// records carry each token's decoded text, so reading them needs no
// tokenizer. It never runs a model and never imports the trainer.
package rollouts
