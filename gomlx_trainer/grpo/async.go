package grpo

import (
	"context"
	"io"
	"sync"
)

// ahead is the next rollout's batch, drawn in a goroutine while the trainer
// optimizes on the current one (async_rollouts, as slime's train_async.py
// and verl's one-step off-policy trainer overlap them). While it is out, the
// goroutine alone uses what drawing reads and changes (t.rng, t.data, the
// engine, the tools); the trainer touches none of them until awaitAhead, so
// a run draws the same prompts with the same seeds, in the same order, every
// time, and as a synchronous run does.
type ahead struct {
	done   chan struct{} // closed when the draw has ended
	b      batch
	err    error
	cancel context.CancelFunc
	// The trainer's RNG state and data position before the draw: a checkpoint
	// saved while the draw is out records these, so that the resumed run draws
	// the same prompts with the same seeds again, from the checkpoint's
	// weights (staleness 0), rather than lose them.
	rng        []byte
	epoch, pos int
}

// drawAhead starts drawing rollout's batch (numbered from 1) from the
// engine as it is now, at version (the optimizer steps of its weights).
func (t *trainer) drawAhead(ctx context.Context, rollout, version int) {
	ctx, cancel := context.WithCancel(ctx)
	a := &ahead{done: make(chan struct{}), cancel: cancel, rng: marshalRNG(t.rngSrc), epoch: t.data.epoch, pos: t.data.pos}
	t.ahead = a
	go func() {
		defer close(a.done)
		a.b, a.err = t.drawBatch(ctx, rollout, version)
	}()
}

// awaitAhead waits for the batch drawAhead started and returns it (ok false
// when none was out).
func (t *trainer) awaitAhead() (b batch, ok bool, err error) {
	a := t.ahead
	if a == nil {
		return batch{}, false, nil
	}
	<-a.done
	a.cancel()
	if a.err != nil { // left out: a checkpoint saved now records the state before the draw
		return batch{}, false, a.err
	}
	t.ahead = nil
	return a.b, true, nil
}

// dropAhead ends the draw that is out, if any, and waits for it; t.ahead
// stays, so that a checkpoint saved after records the state before the draw.
func (t *trainer) dropAhead() {
	if a := t.ahead; a != nil {
		a.cancel()
		<-a.done
	}
}

// resumePoint is the RNG state and data position a checkpoint records: the
// trainer's, or with a draw out, those before it (see ahead).
func (t *trainer) resumePoint() (rng []byte, epoch, pos int) {
	if a := t.ahead; a != nil {
		return a.rng, a.epoch, a.pos
	}
	return marshalRNG(t.rngSrc), t.data.epoch, t.data.pos
}

// lockedWriter serialises the writes of the trainer's output: the draw that
// is out reports its progress while the trainer logs its steps.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
