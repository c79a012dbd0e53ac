package sim

import (
	"hash/fnv"
	"sync"
)

// engineState is the simulated engine's shared state: the batch (running, waiting in FIFO
// order), the token counters /metrics exports and the truth log. One mutex guards it; the
// per-token path touches it once per chunk.
type engineState struct {
	mu       sync.Mutex
	maxBatch int
	running  int
	queue    []chan struct{} // waiting requests, oldest first
	kvTokens int64           // prompt + generated tokens of running requests

	promptTokens  int64
	genTokens     int64
	prefixQueries int64
	prefixHits    int64
	seen          map[uint64]struct{} // prompt hashes, for the prefix-cache counters

	served    []Served
	servedCap int
}

// maxSeenPrompts bounds the prefix-cache model's memory; it forgets everything when full.
const maxSeenPrompts = 4096

// DefaultServedCap is how many request truths Served keeps (the oldest are dropped), so a
// long `perfdag sim` run does not grow without bound.
const DefaultServedCap = 1 << 16

func newEngineState(maxBatch int) *engineState {
	return &engineState{maxBatch: maxBatch, seen: map[uint64]struct{}{}, servedCap: DefaultServedCap}
}

// admit takes a batch slot, waiting in FIFO order while the batch is full. It returns false
// when done closes first (the client went away), without holding a slot.
func (s *engineState) admit(done <-chan struct{}) bool {
	s.mu.Lock()
	if s.running < s.maxBatch && len(s.queue) == 0 {
		s.running++
		s.mu.Unlock()
		return true
	}
	ch := make(chan struct{})
	s.queue = append(s.queue, ch)
	s.mu.Unlock()
	select {
	case <-ch:
		return true
	case <-done:
		s.mu.Lock()
		for i, q := range s.queue {
			if q == ch {
				s.queue = append(s.queue[:i], s.queue[i+1:]...)
				s.mu.Unlock()
				return false
			}
		}
		s.mu.Unlock()
		// The slot was handed over just as the client left: give it back.
		<-ch
		s.release()
		return false
	}
}

// release frees a batch slot, handing it straight to the oldest waiter.
func (s *engineState) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) > 0 {
		ch := s.queue[0]
		s.queue = s.queue[1:]
		close(ch)
		return
	}
	s.running--
}

// load returns running and waiting counts.
func (s *engineState) load() (running, waiting int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running, len(s.queue)
}

// prefill accounts a prompt entering the batch.
func (s *engineState) prefill(prompt string, tokens int) {
	h := fnv.New64a()
	_, _ = h.Write([]byte(prompt))
	key := h.Sum64()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.promptTokens += int64(tokens)
	s.prefixQueries += int64(tokens)
	if _, ok := s.seen[key]; ok {
		s.prefixHits += int64(tokens)
	} else {
		if len(s.seen) >= maxSeenPrompts {
			clear(s.seen)
		}
		s.seen[key] = struct{}{}
	}
	s.kvTokens += int64(tokens)
}

// generated accounts n output tokens and returns the running count for the next delay.
func (s *engineState) generated(n int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.genTokens += int64(n)
	s.kvTokens += int64(n)
	return s.running
}

// finished frees a request's KV tokens.
func (s *engineState) finished(kv int) {
	s.mu.Lock()
	s.kvTokens -= int64(kv)
	s.mu.Unlock()
}

// record appends a request's truth.
func (s *engineState) record(r Served) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.served) >= s.servedCap {
		n := copy(s.served, s.served[len(s.served)/2:])
		s.served = s.served[:n]
	}
	s.served = append(s.served, r)
}

// snapshot is a consistent copy of the counters for /metrics.
type snapshot struct {
	running, waiting          int
	kvTokens                  int64
	promptTokens, genTokens   int64
	prefixQueries, prefixHits int64
}

func (s *engineState) snapshot() snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return snapshot{running: s.running, waiting: len(s.queue), kvTokens: s.kvTokens, promptTokens: s.promptTokens,
		genTokens: s.genTokens, prefixQueries: s.prefixQueries, prefixHits: s.prefixHits}
}
