package openai

import "testing"

// TestReadLagBuckets: every lag counts in a bucket whose bound is at most 12.5 % above it
// (and not below), and a percentile reads the bound of the bucket it falls in.
func TestReadLagBuckets(t *testing.T) {
	for _, us := range []int64{0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 100, 999, 1000, 1001, 4096, 123456, 1 << 30} {
		ns := us*1000 + 1
		b := bucket(ns)
		ub := upper(b) * 1e6 // ns
		if ub < float64(ns) && us > 0 || ub > 1.125*float64(ns)+1000 {
			t.Errorf("%d µs in bucket %d bounded by %.0f ns", us, b, ub)
		}
		if b > 0 && upper(b-1)*1e6 >= float64(ns) && us >= 1 {
			t.Errorf("%d µs in bucket %d, but the bucket below holds up to %.0f ns", us, b, upper(b-1)*1e6)
		}
	}
	var l ReadLag
	l.add(5e6) // before the mark: not in the span
	m := l.Mark()
	for i := range 98 {
		l.add(int64(10e3 + i)) // about 10 µs
	}
	l.add(2e6)  // 2 ms
	l.add(40e6) // 40 ms
	s := l.Since(m)
	if s.Reads != 100 || s.P50Ms > 0.0113 || s.P50Ms < 0.010 || s.P99Ms < 2 || s.P99Ms > 2.25 || s.MaxMs < 40 || s.MaxMs > 45 {
		t.Errorf("summary %+v: want 100 reads, p50 about 0.01 ms, p99 about 2 ms, max about 40 ms", s)
	}
}
