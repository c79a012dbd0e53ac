package importcell

import (
	"fmt"
	"testing"
)

// BenchmarkBuildRuns builds the cell of an SGLang JSONL of 1,000 and of 10,000 runs: one
// point per run, each run read once (-benchmem: the bytes allocated grow with the file).
func BenchmarkBuildRuns(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("runs=%d", n), func(b *testing.B) {
			f := sglangRuns(b, n)
			for b.Loop() {
				if c, _, err := Build([]string{f}, Options{}); err != nil || len(c.Concurrencies) != n {
					b.Fatalf("%v (%d points)", err, len(c.Concurrencies))
				}
			}
		})
	}
}
