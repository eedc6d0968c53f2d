// Package inprocess is the rollout engine that samples in the trainer's own
// process, with the sampler (rollout_engine builtin): on the policy's own
// weights, which it then shares, or, for rollouts sampled while the policy
// trains, on a copy of them that each Sync refreshes.
package inprocess

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/gomlx/compute"

	"github.com/mathrl/mathrl/gomlx_trainer/engine"
	"github.com/mathrl/mathrl/gomlx_trainer/layout"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/gomlx_trainer/sampler"
	"github.com/mathrl/mathrl/gomlx_trainer/toolloop"
)

// Name is the rollout_engine value of the in-process engine.
const Name = "builtin"

func init() { engine.Register(engine.Spec{Name: Name, Check: check, New: newFromPolicy}) }

// Local is what the in-process engine needs of engine.Policy.Local: the
// model and where it runs.
type Local struct {
	Backend compute.Backend
	Model   *qwen3.Model
	Mesh    *layout.Mesh // the learner's mesh, when it has one: the sampler shards its batches over it
}

// check refuses the knobs that only engines on servers use, and
// async_rollouts on several devices: the sampler's copy of the weights lives
// on one.
func check(c engine.Config) error {
	switch {
	case len(c.URLs) > 0:
		return &engine.FieldError{Key: "rollout_engine_urls", Msg: fmt.Sprintf("set, but rollout_engine is %s, which samples in process", Name)}
	case c.WeightsDir != "":
		return &engine.FieldError{Key: "weights_dir", Msg: fmt.Sprintf("set, but rollout_engine is %s, which shares the policy's weights", Name)}
	case c.APIKey != "":
		return &engine.FieldError{Key: "rollout_engine_api_key", Msg: fmt.Sprintf("set, but rollout_engine is %s, which sends no request", Name)}
	case c.Batch != 0:
		return &engine.FieldError{Key: "rollout_engine_batch", Msg: fmt.Sprintf("%d, but only rollout_engine %s sends several sequences a request", c.Batch, engine.SGLang)}
	case c.Async && c.Devices > 1:
		return &engine.FieldError{Key: "async_rollouts", Msg: fmt.Sprintf("with rollout_engine %s on num_devices %d: the sampler's copy of the weights lives on one device (sample on one device, or on servers)", Name, c.Devices)}
	}
	return nil
}

// newFromPolicy is the engine of p.Local (a Local): the sampler of its model,
// on its mesh; with async_rollouts, of a copy of the model.
func newFromPolicy(c engine.Config, p engine.Policy) (engine.Engine, error) {
	l, ok := p.Local.(Local)
	if !ok || l.Backend == nil || l.Model == nil {
		return nil, errors.New("engine: rollout_engine builtin needs the policy's model and backend in process")
	}
	if c.Async {
		cp, err := l.Model.Copy()
		if err != nil {
			return nil, fmt.Errorf("engine: async_rollouts: %w", err)
		}
		return NewCopy(sampler.New(l.Backend, cp), func() error { return cp.CopyWeights(l.Model) }), nil
	}
	smp := sampler.New(l.Backend, l.Model)
	if l.Mesh != nil {
		if err := smp.OnMesh(l.Mesh); err != nil {
			return nil, fmt.Errorf("engine: %w", err)
		}
	}
	return New(smp), nil
}

// Engine is the in-process engine: the sampler, on the policy's own weights
// (New) or on a copy of them (NewCopy).
type Engine struct {
	smp     *sampler.Sampler
	refresh func() error // copies the policy's weights into the sampler's model (nil: it shares them)
	version int          // the version the copy holds (-1: none yet)
}

// New returns the engine of smp, whose model is the policy itself.
func New(smp *sampler.Sampler) *Engine { return &Engine{smp: smp} }

// NewCopy returns the engine of smp whose model is a copy of the
// policy's weights, which refresh copies again: it samples from the weights
// of its last Sync while the policy trains (one-step off-policy rollouts).
// Its first Sync copies whatever the version.
func NewCopy(smp *sampler.Sampler, refresh func() error) *Engine {
	return &Engine{smp: smp, refresh: refresh, version: -1}
}

// Start starts a sampler session over prompts.
func (b *Engine) Start(_ context.Context, prompts [][]int, opts engine.Options) (engine.Session, error) {
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
func (b *Engine) Sync(_ context.Context, version int) error {
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
