package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"iter"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/perfdag/perfdag/engine/checkpoint"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/testkit"
)

// costCampaign measures a list cell that declares its GPUs (tensor_parallel 2, two warm-up
// requests a point) on the simulator served over HTTP (wall-clock time), and a searched cell
// that declares none on the deterministic simulator (virtual time).
const costCampaign = `version: 1
campaign: cost
endpoints:
  live: {url: "sim://", model: m, sim: {ttft_ms: 20, tpot_ms: 10, batch_tpot_ms: 1.1, seed: 3}}
  main: {url: "sim://", model: m, sim: {deterministic: true, ttft_ms: 20, tpot_ms: 10, batch_tpot_ms: 1.1}}
defaults: {hardware: H100}
cells:
  - id: list
    endpoint: live
    tensor_parallel: 2
    workload: {shape: custom, input_tokens: 100, output_tokens: 12}
    requests_per_point: 3x
    warmup_requests: 2
    concurrencies: [1, 4, 8, 16]
  - id: knee
    endpoint: main
    workload: {shape: custom, input_tokens: 100, output_tokens: 12}
    requests_per_point: 3x
    search: {slo: "itl_avg_ms <= 34.5", from: 1, to: 32}
settle: {settle_s: 0.1}
`

// costOf is what a finished cost campaign recorded: every point's cost by cell and
// concurrency, the lines of its request records, the campaign's rollup and the search's.
type costOf struct {
	points  map[string]map[int]schema.MeasurementCost
	raw     map[string][]byte // the points' files by "cell/cN"
	records map[string]int    // lines of the points' request records by "cell/cN"
	rollup  schema.CampaignCost
	sweep   schema.SweepResult
	atlas   []schema.AtlasRow
}

func readCost(t *testing.T, dir string) costOf {
	t.Helper()
	out := costOf{points: map[string]map[int]schema.MeasurementCost{}, raw: map[string][]byte{}, records: map[string]int{}}
	if _, err := campaigndir.ReadJSON(dir, campaigndir.Sweep("knee"), &out.sweep); err != nil {
		t.Fatal(err)
	}
	concs := map[string][]int{"list": {1, 4, 8, 16}, "knee": probeSet(out.sweep)}
	for _, cell := range []string{"list", "knee"} {
		out.points[cell] = map[int]schema.MeasurementCost{}
		for _, c := range concs[cell] {
			b, err := os.ReadFile(campaigndir.Abs(dir, campaigndir.Point(cell, schema.Conc(c))))
			if err != nil {
				t.Fatal(err)
			}
			var p schema.Point
			if err := json.Unmarshal(b, &p); err != nil {
				t.Fatal(err)
			}
			if p.MeasurementCost == nil {
				t.Fatalf("%s/c%d has no measurement_cost", cell, c)
			}
			key := cell + "/c" + strconv.Itoa(c)
			out.points[cell][c] = *p.MeasurementCost
			out.raw[key] = b
			out.records[key] = countLines(t, campaigndir.Abs(dir, campaigndir.Records(cell, schema.Conc(c))))
		}
	}
	var tpm schema.TPMSummary
	if _, err := campaigndir.ReadJSON(dir, campaigndir.TPMJSON(), &tpm); err != nil {
		t.Fatal(err)
	}
	if tpm.MeasurementCost == nil {
		t.Fatal("tpm_summary.json has no measurement_cost")
	}
	out.rollup = *tpm.MeasurementCost
	f, err := os.Open(filepath.Join(dir, campaigndir.Atlas()))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r schema.AtlasRow
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		out.atlas = append(out.atlas, r)
	}
	return out
}

func countLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Count(b, []byte("\n"))
}

// sum adds up costs as the rollup should.
func sum(cs map[int]schema.MeasurementCost) schema.CostTotal {
	var t schema.CostTotal
	for _, c := range slices.Sorted(mapsKeys(cs)) {
		v := cs[c]
		t.Add(&v)
	}
	return t
}

func mapsKeys(m map[int]schema.MeasurementCost) iter.Seq[int] { return maps.Keys(m) }

func nearly(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func sameTotal(a, b schema.CostTotal) bool {
	gpu := (a.GPUSeconds == nil) == (b.GPUSeconds == nil) && (a.GPUSeconds == nil || nearly(*a.GPUSeconds, *b.GPUSeconds))
	return a.Points == b.Points && a.RequestsSent == b.RequestsSent && a.RequestsValid == b.RequestsValid &&
		nearly(a.EndpointS, b.EndpointS) && gpu && a.GPUsUnknown == b.GPUsUnknown && a.Unrecorded == b.Unrecorded
}

// checkCost asserts a finished cost campaign's accounting: each point's cost is what it sent
// and held, every total is the sum over its points, and the atlas carries each point's cost.
func checkCost(t *testing.T, c costOf) {
	t.Helper()
	for cell, pts := range c.points {
		for conc, p := range pts {
			key := cell + "/c" + strconv.Itoa(conc)
			want := 3 * conc
			if cell == "list" {
				want += 2 // warm-up
			}
			if p.RequestsSent != want || p.RequestsSent != c.records[key] || p.RequestsValid != 3*conc {
				t.Errorf("%s: sent %d valid %d, want %d sent (its records have %d) and %d valid", key, p.RequestsSent, p.RequestsValid, want, c.records[key], 3*conc)
			}
			if p.SettleS < 0.1 || p.RunS <= 0 || !nearly(p.EndpointS, p.SettleS+p.RunS) {
				t.Errorf("%s: settle %v run %v endpoint %v: want settle ≥ 0.1 s, a run, endpoint = settle + run", key, p.SettleS, p.RunS, p.EndpointS)
			}
			if cell == "knee" && p.SettleS != 0.1 { // virtual time: the pause asked, not the sleep's wall time
				t.Errorf("%s: settle %v on the deterministic simulator, want the 0.1 s asked", key, p.SettleS)
			}
			switch {
			case cell == "list" && (p.GPUs != 2 || p.GPUSeconds == nil || !nearly(*p.GPUSeconds, 2*p.EndpointS)):
				t.Errorf("%s: gpus %d gpu_s %v, want 2 and 2 × endpoint_s", key, p.GPUs, p.GPUSeconds)
			case cell == "knee" && (p.GPUs != 0 || p.GPUSeconds != nil):
				t.Errorf("%s: gpus %d gpu_s %v: the cell declares no GPU count, so GPU-seconds are unknown", key, p.GPUs, p.GPUSeconds)
			}
		}
	}
	list, knee := sum(c.points["list"]), sum(c.points["knee"])
	var all schema.CostTotal
	for _, cell := range []string{"list", "knee"} {
		for _, conc := range slices.Sorted(mapsKeys(c.points[cell])) {
			v := c.points[cell][conc]
			all.Add(&v)
		}
	}
	if !sameTotal(c.rollup.Total, all) || all.GPUSeconds != nil || all.GPUsUnknown != len(c.points["knee"]) {
		t.Errorf("campaign total %+v, want the sum over points %+v (GPU-seconds unknown: the knee cell declares no GPUs)", c.rollup.Total, all)
	}
	cells := map[string]schema.CostTotal{}
	for _, cc := range c.rollup.Cells {
		cells[cc.Cell] = cc.CostTotal
	}
	if len(c.rollup.Cells) != 2 || !sameTotal(cells["list"], list) || !sameTotal(cells["knee"], knee) || list.GPUSeconds == nil {
		t.Errorf("cell totals %+v, want list %+v and knee %+v", c.rollup.Cells, list, knee)
	}
	if c.sweep.MeasurementCost == nil || !sameTotal(*c.sweep.MeasurementCost, knee) || len(c.sweep.Probes) != len(c.points["knee"]) {
		t.Errorf("sweep_probes.json cost %+v over %d probes, want %+v over %d points", c.sweep.MeasurementCost, len(c.sweep.Probes), knee, len(c.points["knee"]))
	}
	if f := c.sweep.FixedSweep; f == nil || f.Points != 32 || f.Requests != 3*32*33/2 || f.GPUSeconds != nil || f.EndpointS <= 0 {
		t.Errorf("fixed sweep estimate %+v, want 32 points, %d requests, GPU-seconds unknown", f, 3*32*33/2)
	}
	for _, r := range c.atlas {
		p, ok := c.points[r.CellID][r.Concurrency]
		if !ok || r.MeasurementCost == nil || *r.MeasurementCost != p && !(nearly(r.MeasurementCost.EndpointS, p.EndpointS) && r.MeasurementCost.RequestsSent == p.RequestsSent) {
			t.Errorf("atlas %s/c%d cost %+v, want its point's %+v", r.CellID, r.Concurrency, r.MeasurementCost, p)
		}
	}
}

// TestMeasurementCost: every point records what it sent and how long it held the endpoint, in
// GPU-seconds where the cell declares its GPUs and unknown where it does not; the campaign's,
// each cell's and the search's totals are the sums over their points; the cover says so with
// the search's saving against a fixed sweep. A run SIGKILLed mid-point and resumed ends with
// the uninterrupted run's requests and points, its totals the sum over its points, and every
// point reused from before the kill keeps the cost it was measured at (byte for byte).
func TestMeasurementCost(t *testing.T) {
	work := t.TempDir()
	file := filepath.Join(work, "cost.yaml")
	if err := os.WriteFile(file, []byte(costCampaign), 0o644); err != nil {
		t.Fatal(err)
	}
	ref := filepath.Join(work, "ref")
	if b, err := perfdagChild("run", file, "--out", ref).CombinedOutput(); err != nil {
		t.Fatalf("uninterrupted run: %v\n%s", err, b)
	}
	want := readCost(t, ref)
	checkCost(t, want)
	bin := testkit.NeedTool(t, "pdftotext")
	pdf, err := exec.Command(bin, "-layout", "-f", "1", "-l", "1", campaigndir.Abs(ref, campaigndir.Report()), "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	text := strings.Join(strings.Fields(string(pdf)), " ")
	for _, s := range []string{"What it cost", "Measuring took " + group3(want.rollup.Total.RequestsSent) + " requests",
		"GPU-hours unknown: the campaign declares no GPU count (gpus or tensor_parallel) for " + strconv.Itoa(len(want.points["knee"])) + " points",
		"Cells that declare theirs: list ", "the fixed sweep would have taken about 1,584 requests: the search sent"} {
		if !strings.Contains(text, s) {
			t.Errorf("the cover lacks %q", s)
		}
	}

	// killed while the third point of the list runs, then resumed once
	dir := filepath.Join(work, "killed")
	cmd := perfdagChild("run", file, "--out", dir)
	progress, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// the run says when it starts a node; it is killed as c8's run starts
	var seen []string
	sc := bufio.NewScanner(progress)
	for sc.Scan() {
		seen = append(seen, sc.Text())
		if strings.Contains(sc.Text(), "start   run-shape[list/c8]") {
			_ = cmd.Process.Signal(syscall.SIGKILL)
			break
		}
	}
	_ = cmd.Wait()
	if !strings.Contains(seen[len(seen)-1], "run-shape[list/c8]") {
		t.Fatalf("the run ended before run-shape[list/c8] started:\n%s", strings.Join(seen, "\n"))
	}
	before := map[string][]byte{}
	recs := finalState(t, dir)
	for _, c := range []int{1, 4} {
		key := "list/c" + strconv.Itoa(c)
		if r := recs["run-shape["+key+"]"]; r == nil || r.Status != checkpoint.Succeeded {
			t.Fatalf("run-shape[%s] did not succeed before the kill: %+v", key, r)
		}
		b, err := os.ReadFile(campaigndir.Abs(dir, campaigndir.Point("list", schema.Conc(c))))
		if err != nil {
			t.Fatal(err)
		}
		before[key] = b
	}
	res, err := perfdagChild("resume", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, res)
	}
	got := readCost(t, dir)
	checkCost(t, got)
	for key, b := range before {
		if !bytes.Equal(got.raw[key], b) {
			t.Errorf("%s: a point reused by the resume was rewritten (its cost must be the one it was measured at)", key)
		}
	}
	for _, cell := range []string{"list", "knee"} {
		if g, w := slices.Sorted(mapsKeys(got.points[cell])), slices.Sorted(mapsKeys(want.points[cell])); !slices.Equal(g, w) {
			t.Errorf("cell %s: points %v after the resume, %v uninterrupted", cell, g, w)
		}
	}
	g, w := got.rollup.Total, want.rollup.Total
	if g.Points != w.Points || g.RequestsSent != w.RequestsSent || g.RequestsValid != w.RequestsValid || g.GPUsUnknown != w.GPUsUnknown {
		t.Errorf("resumed total %+v, uninterrupted %+v: want the same points and requests", g, w)
	}
	for i := range got.rollup.Cells {
		gc, wc := got.rollup.Cells[i], want.rollup.Cells[min(i, len(want.rollup.Cells)-1)]
		if len(got.rollup.Cells) != len(want.rollup.Cells) || gc.Cell != wc.Cell || gc.Points != wc.Points || gc.RequestsSent != wc.RequestsSent {
			t.Errorf("resumed cell %+v, uninterrupted %+v", gc, wc)
		}
	}
	if got.sweep.Knee != want.sweep.Knee || got.sweep.FixedSweep.Requests != want.sweep.FixedSweep.Requests {
		t.Errorf("resumed search: knee c%d, fixed sweep %d requests; uninterrupted c%d, %d", got.sweep.Knee, got.sweep.FixedSweep.Requests, want.sweep.Knee, want.sweep.FixedSweep.Requests)
	}
	if _, err := os.Stat(campaigndir.Abs(dir, campaigndir.Report())); err != nil {
		t.Errorf("the resume left no report: %v", err)
	}
}

// group3 writes n with thousands separators, as the cover does.
func group3(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
