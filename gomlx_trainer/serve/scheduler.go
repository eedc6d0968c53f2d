package serve

import (
	"fmt"

	"github.com/mathrl/mathrl/gomlx_trainer/sampler"
)

// batch is the running slot session and the job in each row.
type batch struct {
	ss    *sampler.Session
	knobs knobs
	rows  []*job
}

func (b *batch) running() bool {
	for _, j := range b.rows {
		if j != nil {
			return true
		}
	}
	return false
}

// schedule is the scheduler: it admits queued jobs into free rows between
// steps, steps the batch, and hands each finished sequence to its job.
func (s *Server) schedule() {
	defer close(s.done)
	smp := sampler.New(s.opt.Backend, s.model)
	var b *batch
	var queue []*job
	for {
		if b != nil && !b.running() {
			s.closeBatch(b)
			b = nil
		}
		idle := b == nil && len(queue) == 0
		if idle {
			select {
			case j := <-s.jobs:
				queue = s.take(queue, j)
			case <-s.stopc:
				s.closeBatch(b)
				return
			}
		}
		for more := true; more; {
			select {
			case j := <-s.jobs:
				queue = s.take(queue, j)
			default:
				more = false
			}
		}
		if b == nil && len(queue) > 0 && queue[0].group != nil {
			queue[0].done <- s.runGroup(smp, queue[0])
			queue = queue[1:]
			continue
		}
		if b == nil && len(queue) > 0 && queue[0].score != nil {
			queue[0].done <- s.runScore(queue[0])
			queue = queue[1:]
			continue
		}
		if b == nil && len(queue) > 0 && queue[0].update != nil {
			smp = s.swap(queue[0].update)
			queue[0].done <- result{}
			queue = queue[1:]
			continue
		}
		if b == nil && len(queue) > 0 {
			var err error
			if b, err = s.openBatch(smp, queue[0].knobs); err != nil {
				queue[0].done <- result{err: err}
				queue = queue[1:]
				continue
			}
		}
		if b == nil {
			continue
		}
		queue = s.admit(b, queue)
		if err := s.step(b); err != nil {
			s.closeBatch(b)
			b = nil
		}
	}
}

func (s *Server) take(queue []*job, j *job) []*job {
	if s.onQueue != nil {
		s.onQueue(j.id)
	}
	return append(queue, j)
}

// swap makes u's weights those of the sessions to come.
func (s *Server) swap(u *update) *sampler.Sampler {
	s.mu.Lock()
	s.model, s.path, s.version = u.model, u.path, u.version
	s.mu.Unlock()
	if s.prefixes != nil {
		s.prefixes.Flush() // prompts prefilled by the old weights
	}
	return sampler.New(s.opt.Backend, u.model)
}

func (s *Server) openBatch(smp *sampler.Sampler, k knobs) (*batch, error) {
	ss, err := smp.StartSlots(s.opt.MaxBatch, sampler.Options{
		Temperature: k.temperature, TopP: k.topP, TopK: k.topK, StopIDs: k.stopIDs, Capacity: s.info().context(),
		Prefixes: s.prefixes,
	})
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	return &batch{ss: ss, knobs: k, rows: make([]*job, s.opt.MaxBatch)}, nil
}

func (s *Server) closeBatch(b *batch) {
	if b != nil {
		b.ss.Close()
	}
}

// runGroup samples a batch request (or one with n > 1) as a session of its
// own, its sequences in order in rows 0, 1, ...: the session the in-process
// sampler would start for them (sampler.Start, at the same capacity), so the
// same shapes and the same numbers, bit for bit. Its sequences with the same
// prompt share one prefill, and prompts are taken from the prefix cache.
func (s *Server) runGroup(smp *sampler.Sampler, g *job) (res result) {
	defer func() {
		if r := recover(); r != nil {
			res = result{err: fmt.Errorf("serve: batch: %v", r)}
		}
	}()
	prompts := make([][]int, len(g.group))
	seeds := make([]uint64, len(g.group))
	most := 0
	for k, j := range g.group {
		prompts[k], seeds[k], most = j.ids, j.seed, max(most, j.maxNew)
	}
	k := g.knobs
	ss, err := smp.Start(prompts, sampler.Options{MaxNewTokens: most, Temperature: k.temperature, TopP: k.topP, TopK: k.topK,
		StopIDs: k.stopIDs, Seeds: seeds, Prefixes: s.prefixes})
	if err != nil {
		return result{err: fmt.Errorf("serve: %w", err)}
	}
	defer ss.Close()
	for i, j := range g.group {
		if err := ss.Limit(i, j.maxNew); err != nil {
			return result{err: fmt.Errorf("serve: %w", err)}
		}
	}
	ids := make([]int64, len(g.group))
	for i := range ids {
		ids[i] = g.id
	}
	for more := true; more; {
		if more, err = ss.Step(); err != nil {
			return result{err: err}
		}
		if s.onStep != nil {
			s.onStep(ids)
		}
	}
	out := make([]sample, len(g.group))
	for i := range out {
		out[i] = sample{Result: ss.Result(i), cached: ss.SharedPrefix(i)}
	}
	return result{group: out}
}

// admit puts the queued jobs that share b's knobs into its free rows, in
// order, up to the first that does not (a different request, a scoring one or an update
// waits for the batch to drain, and so does everything behind it).
func (s *Server) admit(b *batch, queue []*job) []*job {
	for len(queue) > 0 {
		j := queue[0]
		if j.update != nil || j.group != nil || j.score != nil || !j.knobs.same(b.knobs) {
			break
		}
		row := -1
		for i, r := range b.rows {
			if r == nil {
				row = i
				break
			}
		}
		if row < 0 {
			break
		}
		if err := b.ss.Admit(row, j.ids, j.seed, j.maxNew); err != nil {
			j.done <- result{err: err}
		} else {
			b.rows[row] = j
		}
		queue = queue[1:]
	}
	return queue
}

// step runs one step of b and hands over the sequences that finished; an
// error (or a panic) fails every job in the batch.
func (s *Server) step(b *batch) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("serve: step: %v", r)
		}
		if err != nil {
			for i, j := range b.rows {
				if j != nil {
					j.done <- result{err: err}
					b.rows[i] = nil
				}
			}
		}
	}()
	if _, err := b.ss.Step(); err != nil {
		return err
	}
	var ids []int64
	for i, j := range b.rows {
		if j == nil {
			continue
		}
		if !b.ss.Active(i) {
			j.done <- result{r: sample{Result: b.ss.Result(i), cached: b.ss.SharedPrefix(i)}}
			b.rows[i] = nil
			continue
		}
		ids = append(ids, j.id)
	}
	if s.onStep != nil {
		s.onStep(ids)
	}
	return nil
}
