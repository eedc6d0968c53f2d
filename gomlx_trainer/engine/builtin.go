package engine

import (
	"context"
	"fmt"
	"slices"

	"github.com/mathrl/mathrl/gomlx_trainer/sampler"
	"github.com/mathrl/mathrl/gomlx_trainer/toolloop"
)

// Builtin is the in-process engine: the sampler, on the policy's own weights
// (NewBuiltin) or on a copy of them (NewBuiltinCopy).
type Builtin struct {
	smp     *sampler.Sampler
	refresh func() error // copies the policy's weights into the sampler's model (nil: it shares them)
	version int          // the version the copy holds (-1: none yet)
}

// NewBuiltin returns the engine of smp, whose model is the policy itself.
func NewBuiltin(smp *sampler.Sampler) *Builtin { return &Builtin{smp: smp} }

// NewBuiltinCopy returns the engine of smp whose model is a copy of the
// policy's weights, which refresh copies again: it samples from the weights
// of its last Sync while the policy trains (one-step off-policy rollouts).
// Its first Sync copies whatever the version.
func NewBuiltinCopy(smp *sampler.Sampler, refresh func() error) *Builtin {
	return &Builtin{smp: smp, refresh: refresh, version: -1}
}

// Start starts a sampler session over prompts.
func (b *Builtin) Start(_ context.Context, prompts [][]int, opts Options) (Session, error) {
	ss, err := b.smp.Start(prompts, sampler.Options{
		MaxNewTokens: opts.MaxNewTokens, Temperature: opts.Temperature, TopP: opts.TopP, TopK: opts.TopK,
		StopIDs: opts.StopIDs, Seed: opts.Seed,
	})
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	return &samplerSession{ss: ss, seen: make([]int, len(prompts))}, nil
}

// Sync does nothing when the sampler reads the policy's weights themselves;
// on a copy it copies them again, unless the copy holds version already. No
// session may be running.
func (b *Builtin) Sync(_ context.Context, version int) error {
	if b.refresh == nil || version == b.version {
		return nil
	}
	if err := b.refresh(); err != nil {
		return fmt.Errorf("engine: copy the policy's weights of version %d: %w", version, err)
	}
	b.version = version
	return nil
}

// samplerSession adapts a sampler.Session to Session: one Generate call steps
// the session until every listed sequence has stopped.
type samplerSession struct {
	ss   *sampler.Session
	seen []int // ids of each sequence already handed to the tool loop
}

func (a *samplerSession) Generate(ctx context.Context, active, maxNew []int, step func(toolloop.StepReport)) ([]toolloop.Turn, error) {
	if err := a.run(ctx, active, step); err != nil {
		return nil, err
	}
	turns := make([]toolloop.Turn, len(active))
	for j, i := range active {
		r := a.ss.Result(i)
		turns[j] = toolloop.Turn{IDs: r.IDs[a.seen[i]:], LogProbs: r.LogProbs[a.seen[i]:]}
		if len(turns[j].IDs) > maxNew[j] {
			turns[j].IDs, turns[j].LogProbs = turns[j].IDs[:maxNew[j]], turns[j].LogProbs[:maxNew[j]]
		}
		a.seen[i] = len(r.IDs)
	}
	return turns, nil
}

// run steps the session until no sequence is active or ctx ends, as
// sampler.Session.Run does, and reports each step to step when it is not nil.
func (a *samplerSession) run(ctx context.Context, active []int, step func(toolloop.StepReport)) error {
	if step == nil {
		return a.ss.Run(ctx)
	}
	running := slices.Clone(active)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		before := a.ss.Sampled()
		more, err := a.ss.Step()
		if err != nil {
			return err
		}
		r := toolloop.StepReport{Sampled: a.ss.Sampled() - before}
		running = slices.DeleteFunc(running, func(i int) bool {
			if a.ss.Active(i) {
				return false
			}
			last := -1
			if ids := a.ss.Result(i).IDs; len(ids) > 0 {
				last = ids[len(ids)-1]
			}
			r.Stopped = append(r.Stopped, last)
			return true
		})
		step(r)
		if !more {
			return nil
		}
	}
}

func (a *samplerSession) Append(i int, ids []int) error {
	if err := a.ss.Append(i, ids); err != nil {
		return err
	}
	a.seen[i] = len(a.ss.Result(i).IDs)
	return nil
}

func (a *samplerSession) Close() { a.ss.Close() }
