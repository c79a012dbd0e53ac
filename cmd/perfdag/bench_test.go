package main

import (
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// smokeRuns is how many whole-process smoke renders one BenchmarkSmokeProcess iteration times.
const smokeRuns = 5

// BenchmarkSmokeProcess times `perfdag smoke --out FILE` as a user runs it — a fresh process of
// the built binary: start-up, fixture, charts, PDF, write — five times per iteration, and
// reports the median wall time (s/smoke-median; the target is about 0.25 s) and CPU time. `make bench`
// runs it once (-benchtime 1x); the build before the clock starts is not timed.
func BenchmarkSmokeProcess(b *testing.B) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "perfdag")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("build perfdag: %v\n%s", err, out)
	}
	pdf := filepath.Join(dir, "smoke.pdf")
	var wall, cpu []float64 // per iteration, the median of its runs
	b.ResetTimer()
	for b.Loop() {
		w, c := make([]float64, 0, smokeRuns), make([]float64, 0, smokeRuns)
		for range smokeRuns {
			cmd := exec.Command(bin, "smoke", "--out", pdf)
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("perfdag smoke: %v\n%s", err, out)
			}
			w = append(w, time.Since(start).Seconds())
			c = append(c, (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds())
		}
		wall, cpu = append(wall, median(w)), append(cpu, median(c))
	}
	b.ReportMetric(median(wall), "s/smoke-median")
	// CPU seconds (user+sys) of the process: what the render costs, less swayed by the load
	// of a shared machine than the wall time.
	b.ReportMetric(median(cpu), "cpu-s/smoke-median")
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
