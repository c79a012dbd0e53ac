package openai

import (
	"math"
	"math/bits"
	"sync/atomic"
)

// ReadLag counts a client's reads by how long after the kernel received their data the
// client read it (the read's return minus the SO_TIMESTAMPNS stamp of its data, which the
// kernel-stamped connection has in hand: no clock is read for it). The stamps keep a busy
// client's lateness out of every latency, but a client whose reads lag far behind its data is
// one that cannot keep up: its next sends go late and the streams it holds are fewer than
// asked. Counting costs one atomic add per read; buckets are eight to an octave of
// microseconds (within 9 %), so a percentile needs no sample kept.
type ReadLag struct {
	b [lagBuckets]atomic.Int64
}

// LagSummary is a ReadLag over a span: how many reads, and their lag's p50, p99 and max in
// ms (each the upper bound of its bucket).
type LagSummary struct {
	Reads               int64
	P50Ms, P99Ms, MaxMs float64
}

const (
	lagSub     = 8  // buckets an octave
	lagOctaves = 36 // 1 µs … 2^36 µs (19 h): past any timeout
	lagBuckets = lagSub * (lagOctaves + 1)
)

// bucket is where a lag of ns nanoseconds counts: below 1 µs in bucket 0, then octave o of
// microseconds (2^o ≤ µs < 2^(o+1)) in its lagSub slices.
func bucket(ns int64) int {
	us := ns / 1000
	if us < 1 {
		return 0
	}
	o := bits.Len64(uint64(us)) - 1                    // 2^o ≤ us
	frac := int((uint64(us) << 3 >> o) & (lagSub - 1)) // the three bits after the top one
	return min(1+o*lagSub+frac, lagBuckets-1)
}

// upper is the largest lag (ms) bucket i holds: what a percentile that falls in it reads.
func upper(i int) float64 {
	if i == 0 {
		return 0.001
	}
	o, frac := (i-1)/lagSub, (i-1)%lagSub
	return math.Ldexp(1+float64(frac+1)/lagSub, o) / 1000
}

// add counts one read whose data the kernel received ns before it returned.
func (l *ReadLag) add(ns int64) {
	if l == nil || ns < 0 {
		return
	}
	l.b[bucket(ns)].Add(1)
}

// LagMark is a ReadLag's counts at one moment, to summarize the reads after it (Since).
type LagMark struct {
	b [lagBuckets]int64
}

// Mark takes the counts now.
func (l *ReadLag) Mark() LagMark {
	var m LagMark
	for i := range l.b {
		m.b[i] = l.b[i].Load()
	}
	return m
}

// Since summarizes the reads counted after m.
func (l *ReadLag) Since(m LagMark) LagSummary {
	var d [lagBuckets]int64
	var s LagSummary
	top := -1
	for i := range l.b {
		d[i] = l.b[i].Load() - m.b[i]
		s.Reads += d[i]
		if d[i] > 0 {
			top = i
		}
	}
	if s.Reads == 0 {
		return s
	}
	pct := func(q float64) float64 {
		want := int64(math.Ceil(q * float64(s.Reads)))
		var n int64
		for i, c := range d {
			if n += c; n >= want {
				return upper(i)
			}
		}
		return upper(top)
	}
	s.P50Ms, s.P99Ms, s.MaxMs = pct(0.50), pct(0.99), upper(top)
	return s
}

// ReadLag is the client's read lag: a client without kernel stamps (not on Linux, or with
// Options.UserStamps) counts no read.
func (c *Client) ReadLag() *ReadLag { return &c.lag }
