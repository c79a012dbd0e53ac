package shard

import (
	"strings"
	"testing"
	"time"

	"github.com/perfdag/perfdag/steps/measure/loadgen"
)

// TestSplit: the closed loop's concurrency as evenly as possible with requests in proportion,
// the open loop's rate evenly with a seed and a cap share per client, every request exactly
// once, and a load too small for every client refused.
func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  loadgen.Config
		n    int
		want []Part
	}{
		{"c16 over 4", loadgen.Config{Requests: 160, Concurrency: 16}, 4, []Part{
			{Index: 0, From: 0, Requests: 40, Concurrency: 4}, {Index: 1, From: 40, Requests: 40, Concurrency: 4},
			{Index: 2, From: 80, Requests: 40, Concurrency: 4}, {Index: 3, From: 120, Requests: 40, Concurrency: 4}}},
		{"c10 over 4", loadgen.Config{Requests: 30, Concurrency: 10}, 4, []Part{
			{Index: 0, From: 0, Requests: 9, Concurrency: 3}, {Index: 1, From: 9, Requests: 9, Concurrency: 3},
			{Index: 2, From: 18, Requests: 6, Concurrency: 2}, {Index: 3, From: 24, Requests: 6, Concurrency: 2}}},
		{"c4 over 1", loadgen.Config{Requests: 7, Concurrency: 4}, 1, []Part{{Index: 0, From: 0, Requests: 7, Concurrency: 4}}},
		{"r10 cap 5 over 2", loadgen.Config{Requests: 21, Concurrency: 5, Rate: 10, Seed: 7}, 2, []Part{
			{Index: 0, From: 0, Requests: 11, Concurrency: 3, Rate: 5, Seed: 7}, {Index: 1, From: 11, Requests: 10, Concurrency: 2, Rate: 5, Seed: 8}}},
		{"r8 constant, no cap, over 4", loadgen.Config{Requests: 8, Rate: 8, Arrival: loadgen.ArrivalConstant}, 4, []Part{
			{Index: 0, From: 0, Requests: 2, Rate: 2}, {Index: 1, From: 2, Requests: 2, Rate: 2, Seed: 1, Delay: 125 * time.Millisecond},
			{Index: 2, From: 4, Requests: 2, Rate: 2, Seed: 2, Delay: 250 * time.Millisecond}, {Index: 3, From: 6, Requests: 2, Rate: 2, Seed: 3, Delay: 375 * time.Millisecond}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Split(tc.cfg, tc.n)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("%d parts %+v, want %+v", len(got), got, tc.want)
			}
			for k := range got {
				if got[k] != tc.want[k] {
					t.Errorf("part %d = %+v, want %+v", k, got[k], tc.want[k])
				}
			}
		})
	}
	for _, tc := range []struct {
		cfg  loadgen.Config
		n    int
		want string
	}{
		{loadgen.Config{Requests: 100, Concurrency: 3}, 4, "each client needs at least one stream"},
		{loadgen.Config{Requests: 3, Concurrency: 8}, 4, "each client needs at least one request"},
		{loadgen.Config{Requests: 100, Concurrency: 3, Rate: 5}, 4, "in-flight cap 3 over 4 clients"},
		{loadgen.Config{Requests: 100, Concurrency: 3}, 0, "want at least 1"},
	} {
		if _, err := Split(tc.cfg, tc.n); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Split(%+v, %d) = %v, want an error saying %q", tc.cfg, tc.n, err, tc.want)
		}
	}
}

// TestSplitCoversEveryRequestOnce: over many loads, the parts tile 0…R−1 and sum to the
// concurrency (or the cap), each within one of the others.
func TestSplitCoversEveryRequestOnce(t *testing.T) {
	for n := 1; n <= 9; n++ {
		for c := n; c <= 40; c += 3 {
			for _, r := range []int{n, c, 3 * c, 1000} {
				for _, rate := range []float64{0, 12.5} {
					parts, err := Split(loadgen.Config{Requests: r, Concurrency: c, Rate: rate}, n)
					if err != nil {
						t.Fatalf("n %d c %d r %d rate %v: %v", n, c, r, rate, err)
					}
					next, conc, lo, hi := 0, 0, c, 0
					for _, p := range parts {
						if p.From != next || p.Requests < 1 {
							t.Fatalf("n %d c %d r %d rate %v: part %+v after %d", n, c, r, rate, p, next)
						}
						next += p.Requests
						conc += p.Concurrency
						lo, hi = min(lo, p.Concurrency), max(hi, p.Concurrency)
					}
					if next != r || conc != c || hi-lo > 1 {
						t.Fatalf("n %d c %d r %d rate %v: parts %+v cover %d requests, %d streams", n, c, r, rate, parts, next, conc)
					}
				}
			}
		}
	}
}
