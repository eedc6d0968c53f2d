package grpo

import "math/rand/v2"

// promptStream hands out training problems in a seeded order, epoch after
// epoch; (epoch, pos) is its whole state.
type promptStream struct {
	problems   []Problem
	shuffle    bool
	seed       uint64
	epoch, pos int
	order      []int
}

func newPromptStream(problems []Problem, shuffle bool, seed uint64, epoch, pos int) *promptStream {
	s := &promptStream{problems: problems, shuffle: shuffle, seed: seed, epoch: epoch, pos: pos}
	s.order = s.orderOf(epoch)
	return s
}

func (s *promptStream) orderOf(epoch int) []int {
	order := make([]int, len(s.problems))
	for i := range order {
		order[i] = i
	}
	if s.shuffle {
		r := rand.New(rand.NewPCG(s.seed, uint64(epoch)))
		r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	}
	return order
}

func (s *promptStream) next() Problem {
	if s.pos >= len(s.order) {
		s.epoch, s.pos = s.epoch+1, 0
		s.order = s.orderOf(s.epoch)
	}
	p := s.problems[s.order[s.pos]]
	s.pos++
	return p
}
