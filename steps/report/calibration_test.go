package report_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/report"
	"github.com/perfdag/perfdag/steps/testkit"
)

// calibrated is partialInput with TTFT p50s in its atlas, a run record and a calibration of
// c1 and c16 (p99 errors 0.18 and 2.4 ms).
func calibrated(runHost, calHost string, calAt time.Time) report.Input {
	in := partialInput()
	for i := range in.Atlas {
		if in.Atlas[i].TTFTAvgMs != nil {
			in.Atlas[i].TTFTP50Ms = in.Atlas[i].TTFTAvgMs
		}
	}
	runAt := time.Date(2026, 12, 6, 2, 0, 0, 0, time.UTC)
	in.Run = &campaigndir.Info{Campaign: "aa-partial", Host: runHost, Created: runAt, Updated: runAt}
	stat := func(p99 float64) *schema.Stat { return &schema.Stat{Unit: "ms", Count: 64, P50: p99 / 3, P99: p99} }
	in.Calibration = &schema.Calibration{Schema: schema.SchemaCalibration, Campaign: "aa-partial", Created: calAt,
		Machine: schema.CalibrationMachine{Host: calHost, GOOS: "linux", GOARCH: "amd64", NumCPU: 2, LoadAvg: [3]float64{0.7, 0.8, 0.4}},
		Points: []schema.CalibrationPoint{
			{Concurrency: 1, TTFTErrorMs: stat(0.18)},
			{Concurrency: 16, TTFTErrorMs: stat(2.4)},
		}}
	return in
}

// coverText is the first page of the rendered report, whitespace collapsed.
func coverText(t *testing.T, in report.Input) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.pdf")
	if err := report.Render(context.Background(), in, out); err != nil {
		t.Fatal(err)
	}
	bin := testkit.NeedTool(t, "pdftotext")
	b, err := exec.Command(bin, "-layout", "-f", "1", "-l", "1", out, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	return strings.Join(strings.Fields(string(b)), " ")
}

// TestCoverShowsTheClientErrorBar: each headline TTFT carries the p99 error of the calibrated
// concurrency nearest its own (C=1 → c1; C=10 → c16), and the note says what ± is, where
// and when it was measured; a calibration from another machine or days before says so.
func TestCoverShowsTheClientErrorBar(t *testing.T) {
	runAt := time.Date(2026, 12, 6, 2, 0, 0, 0, time.UTC)
	t.Run("same machine", func(t *testing.T) {
		text := coverText(t, calibrated("vm", "vm", runAt.Add(-time.Hour)))
		mustContain(t, text, "412 ±0.18 at C=1", "1,234 ±0.18 at C=1",
			"± is this client's own TTFT error, p99 ms, at the calibrated concurrency nearest each row's (c1; perfdag calibrate, 2026-12-06 01:00 UTC on vm, load 0.7).")
		for _, not := range []string{"another machine", "before the run", "after the run"} {
			if strings.Contains(text, not) {
				t.Errorf("cover says %q for a calibration of this machine an hour before", not)
			}
		}
		// The cover still fits its page: the contents table ends on it.
		mustContain(t, text, report.TitleCompare)
	})
	t.Run("another machine, days before", func(t *testing.T) {
		text := coverText(t, calibrated("gpu-node-7", "laptop", runAt.Add(-75*time.Hour)))
		mustContain(t, text, "412 ±0.18 at C=1",
			"Calibrated on another machine (laptop) than the run's (gpu-node-7): the error bar is that machine's.",
			"Calibrated 3 days before the run started.")
	})
	t.Run("after the run", func(t *testing.T) {
		text := coverText(t, calibrated("vm", "vm", runAt.Add(30*time.Hour)))
		mustContain(t, text, "Calibrated 30 hours after the run.")
	})
	t.Run("lowest C nearer c16", func(t *testing.T) {
		in := calibrated("vm", "vm", runAt)
		var kept []schema.AtlasRow
		for _, r := range in.Atlas {
			if r.Concurrency == 10 {
				kept = append(kept, r)
			}
		}
		in.Atlas = kept
		mustContain(t, coverText(t, in), "655 ±2.4 at C=10", "nearest each row's (c16;")
	})
	t.Run("no calibration", func(t *testing.T) {
		in := calibrated("vm", "vm", runAt)
		in.Calibration = nil
		text := coverText(t, in)
		mustContain(t, text, "412 at C=1")
		if strings.Contains(text, "±") {
			t.Error("cover shows an error bar without a calibration")
		}
	})
	t.Run("imported points carry none", func(t *testing.T) {
		in := calibrated("vm", "vm", runAt)
		for i := range in.Atlas {
			in.Atlas[i].TokenBasis = schema.ImportedBasisPrefix + "aiperf:server"
		}
		if text := coverText(t, in); strings.Contains(text, "±") {
			t.Error("an imported TTFT (another tool's client) carries perfdag's error bar")
		}
	})
	t.Run("unusable file", func(t *testing.T) {
		in := calibrated("vm", "vm", runAt)
		in.Calibration, in.CalibrationErr = nil, `calibration.json: schema "x", want calibration_v1`
		mustContain(t, coverText(t, in), `Client calibration not used: calibration.json: schema "x", want calibration_v1`)
	})
}
