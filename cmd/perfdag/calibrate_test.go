package main

import (
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/testkit"
)

const calibrateCampaign = `version: 1
campaign: tiny
kind: latency
endpoints:
  sim: {url: "sim://", model: m, sim: {ttft_ms: 1, tpot_ms: 0.1}}
cells:
  - id: a
    workload: {shape: custom, input_tokens: 64, output_tokens: 8}
    concurrencies: [1, 2]
    requests_per_point: 4
`

// TestCalibrateThenRun: calibrate writes a valid calibration_v1 with every figure present and
// sane at each concurrency (never how large: the machine is shared), a run into the same
// directory renders the client's error bar beside the cover's TTFT, and bad input — an
// unbounded --requests, another campaign's directory, one that cannot be created — exits with
// its class's code.
func TestCalibrateThenRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the simulator and a campaign")
	}
	root := t.TempDir()
	yaml, dir := filepath.Join(root, "tiny.yaml"), filepath.Join(root, "camps", "d")
	if err := os.WriteFile(yaml, []byte(calibrateCampaign), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := perfdagChild("calibrate", yaml, "--dir", dir, "--requests", "6", "--max-streams", "0").CombinedOutput(); err != nil {
		t.Fatalf("calibrate: %v\n%s", err, b)
	}
	var cal schema.Calibration
	if found, err := campaigndir.ReadJSON(dir, campaigndir.Calibration(), &cal); !found || err != nil {
		t.Fatalf("calibration.json: found %v, %v", found, err)
	}
	m := cal.Machine
	if cal.Schema != schema.SchemaCalibration || cal.Campaign != "tiny" || cal.Created.IsZero() || cal.Method == "" ||
		m.GOOS == "" || m.GOARCH == "" || m.NumCPU < 1 || m.GOMAXPROCS < 1 || m.Version == "" {
		t.Errorf("calibration header: %+v", cal)
	}
	if len(cal.Points) != 2 || cal.Points[0].Concurrency != 1 || cal.Points[1].Concurrency != 2 {
		t.Fatalf("points: %+v, want c1 and c2", cal.Points)
	}
	finite := func(s *schema.Stat) bool {
		return s != nil && s.Count == 6 && !math.IsNaN(s.P50) && !math.IsInf(s.P99, 0) && s.P50 <= s.P99
	}
	for _, p := range cal.Points {
		if p.Requests != 6 || p.Failed != 0 {
			t.Errorf("c%d: %d paired, %d failed; want 6 and 0", p.Concurrency, p.Requests, p.Failed)
		}
		if !finite(p.TTFTErrorMs) || !finite(p.SendMs) || !finite(p.ReceiveMs) || !finite(p.ServerTTFTMs) {
			t.Errorf("c%d: error %+v send %+v receive %+v server %+v", p.Concurrency, p.TTFTErrorMs, p.SendMs, p.ReceiveMs, p.ServerTTFTMs)
		} else if p.SendMs.Min < 0 || p.ServerTTFTMs.Min < 0 {
			t.Errorf("c%d: a negative duration on one clock: send %+v server %+v", p.Concurrency, p.SendMs, p.ServerTTFTMs)
		}
		if p.IngestRequests < 1 || p.IngestTokens != p.IngestRequests*1024 || !(p.IngestTokensPerS > 0) || !(p.IngestClientCPUS > 0) {
			t.Errorf("c%d ingest: %+v", p.Concurrency, p)
		}
	}

	if b, err := perfdagChild("run", yaml, "--out", dir).CombinedOutput(); err != nil {
		t.Fatalf("run: %v\n%s", err, b)
	}
	bin := testkit.NeedTool(t, "pdftotext")
	out, err := exec.Command(bin, "-layout", "-f", "1", "-l", "1", campaigndir.Abs(dir, campaigndir.Report()), "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	cover := strings.Join(strings.Fields(string(out)), " ")
	for _, want := range []string{" ± is this client's own TTFT error, p99 ms, at the calibrated concurrency nearest each row's (c1; perfdag calibrate, "} {
		if !strings.Contains(cover, want) {
			t.Errorf("cover lacks %q:\n%s", want, cover)
		}
	}
	if !strings.Contains(cover, " ±") || !strings.Contains(cover, "at C=1") {
		t.Errorf("the headline TTFT carries no error bar:\n%s", cover)
	}

	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"calibrate"}, ExitUsage},
		{[]string{"calibrate", yaml, "--dir", dir, "--requests", "-2"}, ExitUsage},
		{[]string{"calibrate", yaml, "--dir", dir, "--requests", "1000000000000"}, ExitUsage},
		{[]string{"calibrate", yaml, "--dir", "/proc/self/nope"}, ExitUsage},
		{[]string{"calibrate", writeFile(t, root, "other.yaml", strings.Replace(calibrateCampaign, "campaign: tiny", "campaign: other", 1)), "--dir", dir}, ExitUsage},
		{[]string{"calibrate", yaml, "--root", filepath.Join(root, "nowhere")}, ExitUsage},
		{[]string{"calibrate", filepath.Join(root, "missing.yaml")}, ExitInvalid}, // as perfdag run says it
		{[]string{"calibrate", writeFile(t, root, "bad.yaml", "version: 1\ncampaign: Bad Slug\n")}, ExitInvalid},
	} {
		err := perfdagChild(tc.args...).Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != tc.code {
			t.Errorf("perfdag %s: %v, want exit %d", strings.Join(tc.args, " "), err, tc.code)
		}
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
