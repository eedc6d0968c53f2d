// Package arith generates the CPU demo's tasks: multi-digit multiplication and
// addition problems whose answers a small model cannot easily compute in its
// head but can get exactly by calling the code_interpreter tool, and the
// warm-start traces that show it how (some call the tool, some answer directly).
//
// It only makes text and numbers; running the traces' code and rendering them
// into token ids is the trainer's job.
package arith
