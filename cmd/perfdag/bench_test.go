package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfdag/perfdag/steps/testkit/benchgen"
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

// BenchmarkImportRunsProcess times `perfdag import FILE --print` as a fresh process of the
// built binary on SGLang JSONL files of many runs, and reports its wall and CPU time and its
// peak RSS (the kernel's ru_maxrss of the process):
//
//   - runs=1000, runs=10000: the sample's aggregate-only line at concurrency 1..N (1.09 MB
//     and 11 MB). 1,000 runs took 60 s and 2.2 GB when every run re-read the whole file.
//   - runs=1000,details: 1,000 runs of 294 requests with their per-request lists
//     (--output-details), 93 MB: 590 MB peak RSS when the file was read whole, 81 MB since.
//   - runs=10000,details: 10,000 runs of 16 requests with their lists, 61 MB: 406 MB
//     peak RSS read whole, 104 MB since (most of it the 10,000 points' statistics).
//
// The file is indexed run by run and each run read when its point is built, so the peak is
// about one run's, not the file's. A 10,000-point cell is read, built and then refused (exit
// 3) as --into refuses it: it would make a campaign file past the 256 KiB limit; the figures
// are the whole process's all the same. PERFDAG_BENCH_BIN names another perfdag binary to
// time (an older build, for a before/after).
func BenchmarkImportRunsProcess(b *testing.B) {
	dir := b.TempDir()
	bin := os.Getenv("PERFDAG_BENCH_BIN")
	if bin == "" {
		bin = filepath.Join(dir, "perfdag")
		if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
			b.Fatalf("build perfdag: %v\n%s", err, out)
		}
	}
	line, err := os.ReadFile("../../testdata/imports/sglang-c4.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		runs, details int // details: requests a run with per-request lists; 0: the sample's aggregate-only line
	}{{1000, 0}, {10000, 0}, {1000, 294}, {10000, 16}} {
		name := fmt.Sprintf("runs=%d", tc.runs)
		file := filepath.Join(dir, name+".jsonl")
		var size int64
		if tc.details > 0 {
			name += ",details"
			file = filepath.Join(dir, fmt.Sprintf("runs%d-details.jsonl", tc.runs))
			if size, err = benchgen.SGLangDetails(file, tc.runs, tc.details); err != nil {
				b.Fatal(err)
			}
		} else {
			var s strings.Builder
			for c := 1; c <= tc.runs; c++ {
				s.WriteString(strings.Replace(strings.TrimSpace(string(line)), `"max_concurrency": 4`, fmt.Sprintf(`"max_concurrency": %d`, c), 1) + "\n")
			}
			if err := os.WriteFile(file, []byte(s.String()), 0o644); err != nil {
				b.Fatal(err)
			}
			size = int64(s.Len())
		}
		b.Run(name, func(b *testing.B) {
			var wall, cpu, rss []float64
			for b.Loop() {
				cmd := exec.Command(bin, "import", file, "--print")
				start := time.Now()
				out, err := cmd.CombinedOutput()
				if err != nil && !(tc.runs > 1000 && cmd.ProcessState.ExitCode() == ExitInvalid && strings.Contains(string(out), "256 KiB limit")) {
					b.Fatalf("perfdag import: %v\n%.2000s", err, out)
				}
				wall = append(wall, time.Since(start).Seconds())
				cpu = append(cpu, (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds())
				rss = append(rss, float64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss)/1024) // KiB on Linux
			}
			b.ReportMetric(median(wall), "s/import")
			b.ReportMetric(median(cpu), "cpu-s/import")
			b.ReportMetric(median(rss), "peak-RSS-MiB")
			b.ReportMetric(float64(size)/(1<<20), "file-MiB")
		})
	}
}
