package promscrape

import (
	"context"
	"sync"
	"time"
)

// PollStats says how a polling period went: a flaky endpoint costs samples, never the run.
type PollStats struct {
	Scrapes  int   // successful fetches
	Failures int   // failed fetches (a fetch cut short by Stop is neither)
	LastErr  error // the most recent failure, nil when none
}

// Poller fetches one URL at once and then every interval in its own goroutine until stopped,
// handing each successful scrape to a callback.
type Poller struct {
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once

	mu    sync.Mutex
	stats PollStats
}

// StartPoller begins polling url; onScrape runs on the polling goroutine, one scrape at a time.
// Polling ends when ctx is cancelled or Stop is called.
func StartPoller(ctx context.Context, f *Fetcher, url string, every time.Duration, onScrape func(*Scrape)) *Poller {
	if every <= 0 {
		every = time.Second
	}
	ctx, cancel := context.WithCancel(ctx)
	p := &Poller{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			s, err := f.Fetch(ctx, url)
			if ctx.Err() != nil {
				return
			}
			p.mu.Lock()
			if err != nil {
				p.stats.Failures++
				p.stats.LastErr = err
			} else {
				p.stats.Scrapes++
			}
			p.mu.Unlock()
			if err == nil {
				onScrape(s)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

// Stop ends polling, waits for the goroutine (an in-flight fetch is cancelled) and returns the
// stats. It is safe to call more than once.
func (p *Poller) Stop() PollStats {
	p.once.Do(p.cancel)
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

// Sampler polls a server's /metrics during a run and keeps one Reading per scrape, so Window can
// report the KV-cache and running-request peaks (and SGLang's acceptance gauges) that only
// sampling during the run can see.
type Sampler struct {
	poller *Poller

	mu       sync.Mutex
	readings []Reading
}

// StartSampler begins sampling url every interval until Stop or ctx ends.
func StartSampler(ctx context.Context, f *Fetcher, url string, every time.Duration) *Sampler {
	s := &Sampler{}
	s.poller = StartPoller(ctx, f, url, every, func(sc *Scrape) {
		r := sc.Reading()
		s.mu.Lock()
		s.readings = append(s.readings, r)
		s.mu.Unlock()
	})
	return s
}

// Stop ends sampling and returns the readings in time order with the polling stats.
func (s *Sampler) Stop() ([]Reading, PollStats) {
	st := s.poller.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Reading(nil), s.readings...), st
}
