package engine

import (
	"context"

	"github.com/mathrl/mathrl/gomlx_trainer/toolloop"
)

// Engine samples rollouts.
type Engine interface {
	// Start begins a session whose sequences are prompts; the tool loop drives
	// it, and the caller closes it.
	Start(ctx context.Context, prompts [][]int, opts Options) (Session, error)
	// Sync makes the sessions started after it sample from the policy as it is
	// after version optimizer steps (the policy's own weights; an engine that
	// samples elsewhere fetches them). A version it already has is a no-op.
	Sync(ctx context.Context, version int) error
}

// Session is a batch of sequences being generated: the tool loop's
// toolloop.Session, and Close to free what it holds.
type Session interface {
	toolloop.Session
	Close()
}

// Options are the sampling knobs of one session.
type Options struct {
	MaxNewTokens int     // most tokens after each prompt, sampled and appended together
	Temperature  float64 // 0 is greedy
	TopP         float64 // 0 or 1: off
	TopK         int     // 0: off
	StopIDs      []int   // a sampled id in this list pauses its sequence (toolloop.Session.Generate returns)
	Seed         uint64  // sequence i draws from seeding.SequenceSeed(Seed, i)
}
