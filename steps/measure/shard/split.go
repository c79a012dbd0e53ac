// Package shard splits one point's load over client processes and brings their records back
// onto one clock: the coordinator (run-shape) starts N children of the perfdag binary
// (`perfdag shard`), hands each its share over its stdin, measures each child's clock offset
// by timestamp exchanges over the same pipe, agrees a start time every child waits for, and
// merges the shards' records — each shifted by its offset — into the point's records. A child
// that dies fails the point: a point is never computed short of its load.
package shard

import (
	"fmt"
	"time"

	"github.com/perfdag/perfdag/steps/measure/loadgen"
)

// Part is one client's share of a point's load.
type Part struct {
	Index       int     // k, from 0
	From        int     // its requests are the point's From … From+Requests−1
	Requests    int     //
	Concurrency int     // closed loop: its streams; open loop: its share of the in-flight cap (0: none)
	Rate        float64 // open loop: its arrival rate (the point's ÷ N)
	Seed        int64   // open loop: its arrival stream's seed
	// Delay is how long after the agreed start the client begins: constant arrivals are
	// phased k/rate apart, so the merged arrivals stay evenly spaced; 0 otherwise.
	Delay time.Duration
}

// Split divides a point's load over n clients. Closed loop: the concurrency as evenly as
// possible (c16 over 4: 4 each; c10 over 4: 3, 3, 2, 2) and the requests in proportion to
// it (one each first). Open loop: the rate evenly, each client its own arrival stream (seed + k), the cap and
// the requests as evenly as possible. Every client gets at least one request and, in a
// closed loop, one stream; a load too small for that is an error.
func Split(cfg loadgen.Config, n int) ([]Part, error) {
	if n < 1 {
		return nil, fmt.Errorf("split over %d clients: want at least 1", n)
	}
	if cfg.Requests < n {
		return nil, fmt.Errorf("%d requests over %d clients: each client needs at least one request", cfg.Requests, n)
	}
	parts := make([]Part, n)
	if cfg.Rate == 0 {
		if cfg.Concurrency < n {
			return nil, fmt.Errorf("concurrency %d over %d clients: each client needs at least one stream", cfg.Concurrency, n)
		}
		conc := even(cfg.Concurrency, n)
		// one request each, the rest in proportion to the streams, rounded on the running sum
		// so they add up
		rest := cfg.Requests - n
		cum, from, given := 0, 0, 0
		for k := range parts {
			cum += conc[k]
			upto := (rest*cum*2 + cfg.Concurrency) / (2 * cfg.Concurrency)
			parts[k] = Part{Index: k, From: from, Requests: 1 + upto - given, Concurrency: conc[k]}
			from, given = from+parts[k].Requests, upto
		}
	} else {
		if cfg.Concurrency > 0 && cfg.Concurrency < n {
			return nil, fmt.Errorf("in-flight cap %d over %d clients: each client needs at least one slot", cfg.Concurrency, n)
		}
		reqs, caps := even(cfg.Requests, n), even(cfg.Concurrency, n)
		rate := cfg.Rate / float64(n)
		from := 0
		for k := range parts {
			parts[k] = Part{Index: k, From: from, Requests: reqs[k], Concurrency: caps[k], Rate: rate, Seed: cfg.Seed + int64(k)}
			if cfg.Arrival == loadgen.ArrivalConstant {
				parts[k].Delay = time.Duration(float64(k) / cfg.Rate * float64(time.Second))
			}
			from += reqs[k]
		}
	}
	for _, p := range parts {
		if p.Requests < 1 {
			return nil, fmt.Errorf("%d requests over %d clients leave client %d none", cfg.Requests, n, p.Index)
		}
	}
	return parts, nil
}

// even splits total into n parts differing by at most one, the larger first.
func even(total, n int) []int {
	out := make([]int, n)
	for k := range out {
		out[k] = total / n
		if k < total%n {
			out[k]++
		}
	}
	return out
}

// Config is the loadgen configuration of one part of cfg.
func (p Part) Config(cfg loadgen.Config) loadgen.Config {
	c := loadgen.Config{Requests: p.Requests, Concurrency: p.Concurrency, Rate: p.Rate, Arrival: cfg.Arrival, Burstiness: cfg.Burstiness, Seed: cfg.Seed}
	if p.Rate > 0 {
		c.Seed = p.Seed
	}
	return c
}
