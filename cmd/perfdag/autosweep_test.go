package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/perfdag/perfdag/engine/checkpoint"
	"github.com/perfdag/perfdag/engine/diag"
	"github.com/perfdag/perfdag/engine/events"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// autoSweepCampaign has two sweep: auto cells on the real-time simulator (a batch of up to 8
// gets slower per token as it fills): one capped at max_in_flight 16 (its saturating point
// c16, its rate points r<rate>-cap16), one uncapped at throughput_concurrency 8 (r<rate>).
const autoSweepCampaign = `version: 1
campaign: auto-sweep
endpoints:
  main:
    url: sim://
    model: perfdag/sim
    sim: {ttft_ms: 20, tpot_ms: 5, batch_tpot_ms: 0.5, max_batch: 8, seed: 3}
defaults: {engine: vllm, hardware: H100, quant: FP8, tensor_parallel: 1}
cells:
  - id: capped
    workload: {shape: custom, input_tokens: 100, output_tokens: 12, arrival: constant}
    requests_per_point: 30
    max_in_flight: 16
    sweep: {auto: {rates: 3}}
  - id: open
    workload: {shape: custom, input_tokens: 100, output_tokens: 12}
    requests_per_point: 24
    sweep: {auto: {rates: 2, throughput_concurrency: 8}}
`

// TestAutoSweepRealTime is issue 29 item 2's sweep: auto on the real-time simulator: plan
// shows each cell's bound; the run measures c1, then the saturating point, then the rates
// evenly spaced from c1's request throughput to the saturating one's (as its own points
// recorded them, three significant digits), each rate point keyed r<rate>[-cap<n>] in
// sweep_probes.json, its folder, its point.json (asked that rate at that cap) and one atlas row.
func TestAutoSweepRealTime(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(path, []byte(autoSweepCampaign), 0o644); err != nil {
		t.Fatal(err)
	}
	plan, err := perfdagChild("plan", path).CombinedOutput()
	if err != nil {
		t.Fatalf("plan: %v\n%s", err, plan)
	}
	for _, want := range []string{`(?m)^1 +sweep\[capped\] +sweep .*\(expands at run time: ≤ 5 probes\)$`, `(?m)^3 +sweep\[open\] +sweep .*\(expands at run time: ≤ 4 probes\)$`} {
		if !regexp.MustCompile(want).Match(plan) {
			t.Errorf("plan lacks %s:\n%s", want, plan)
		}
	}
	out := filepath.Join(dir, "out")
	if b, err := perfdagChild("run", path, "--out", out).CombinedOutput(); err != nil {
		t.Fatalf("run: %v\n%s", err, b)
	}
	atlas := atlasLoads(t, out)
	for _, c := range []autoCellWant{{"capped", 16, 16, 3}, {"open", 8, 0, 2}} {
		got := checkAutoCell(t, out, c)
		if !slices.Equal(atlas[c.cell], got) {
			t.Errorf("%s: atlas rows %v, want %v", c.cell, atlas[c.cell], got)
		}
	}
}

// autoCellWant is what a sweep: auto cell is: its saturating concurrency, its rates' cap, how
// many rates.
type autoCellWant struct {
	cell          string
	top, cap, num int
}

// checkAutoCell checks a sweep: auto cell's outcome against its own anchors' point.json: the
// probes c1, c<top>, then the rates spaced between their request throughputs, keyed
// r<rate>[-cap<n>], each with its folder and a point.json that asked that rate at that cap.
// It returns the probes' keys.
func checkAutoCell(t *testing.T, out string, c autoCellWant) []string {
	t.Helper()
	var sw schema.SweepResult
	if _, err := campaigndir.ReadJSON(out, campaigndir.Sweep(c.cell), &sw); err != nil {
		t.Fatal(err)
	}
	point := func(l schema.Load) schema.Point {
		var p schema.Point
		if found, err := campaigndir.ReadJSON(out, campaigndir.Point(c.cell, l), &p); err != nil || !found {
			t.Fatalf("%s %s: point.json found %v, %v", c.cell, l.Key(), found, err)
		}
		return p
	}
	sync, top := point(schema.Conc(1)), point(schema.Conc(c.top))
	rates := schema.AutoSweepRatesBetween(sync.RequestThroughput, top.RequestThroughput, c.num)
	if len(rates) != c.num {
		t.Fatalf("%s: c1 %v req/s, c%d %v req/s give rates %v", c.cell, sync.RequestThroughput, c.top, top.RequestThroughput, rates)
	}
	suffix := ""
	if c.cap > 0 {
		suffix = fmt.Sprintf("-cap%d", c.cap)
	}
	want := []string{"c1", fmt.Sprintf("c%d", c.top)}
	for _, r := range rates {
		want = append(want, "r"+schema.FormatRate(r)+suffix)
	}
	var got []string
	for _, p := range sw.Probes {
		got = append(got, p.PointLoad().Key())
	}
	if sw.Mode != schema.SweepAuto || !slices.Equal(got, want) || sw.Bound != 2+c.num {
		t.Fatalf("%s: mode %q probes %v bound %d, want auto %v bound %d", c.cell, sw.Mode, got, sw.Bound, want, 2+c.num)
	}
	a := sw.Auto
	if a == nil || a.SyncRequestRate != sync.RequestThroughput || a.PeakRequestRate != top.RequestThroughput || !slices.Equal(a.Rates, rates) ||
		a.ThroughputConcurrency != c.top || a.MaxInFlight != c.cap || a.Unknown != "" {
		t.Fatalf("%s: auto %+v, want sync %v peak %v rates %v", c.cell, a, sync.RequestThroughput, top.RequestThroughput, rates)
	}
	for _, r := range rates {
		l := schema.RateAt(r, c.cap)
		p := point(l)
		if p.Status != "ok" || p.OpenLoop == nil || p.OpenLoop.AskedRate != r || p.OpenLoop.InFlightCap != c.cap || p.PointLoad() != l {
			t.Errorf("%s %s: status %s load %s open loop %+v", c.cell, l.Key(), p.Status, p.PointLoad().Key(), p.OpenLoop)
		}
		if _, err := os.Stat(filepath.Join(out, filepath.Dir(campaigndir.Records(c.cell, l)))); err != nil || filepath.Base(filepath.Dir(campaigndir.Records(c.cell, l))) != l.Key() {
			t.Errorf("%s: no folder %s: %v", c.cell, l.Key(), err)
		}
	}
	t.Logf("%s: c1 %.3g req/s, c%d %.3g req/s, probes %v", c.cell, sync.RequestThroughput, c.top, top.RequestThroughput, got)
	return got
}

// TestAutoSweepRealTimeResumes: on the real-time simulator (the rates depend on what its
// anchors measured, so no two runs ask the same ones), a sweep: auto stopped right after its
// saturating point's group, as its first rate point starts, in the middle of its second and
// after its last's group is brought to its end by one resume: exit 0, every node succeeded, no
// point whose group had finished measured again, and the rates those reused anchors give
// measured and written as an uninterrupted run writes them (checkAutoCell), with an atlas row
// per point.
func TestAutoSweepRealTimeResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("four interrupted real-time runs and their resumes")
	}
	src := autoSweepCampaign[:strings.Index(autoSweepCampaign, "  - id: open")]
	for i, s := range []stopAt{
		{syscall.SIGKILL, events.NodeEnd, "scrape-spec[", 2},
		{syscall.SIGKILL, events.NodeStart, "run-shape[", 3},
		{syscall.SIGINT, events.Progress, "run-shape[", 4},
		{syscall.SIGKILL, events.NodeEnd, "scrape-spec[", 5},
	} {
		t.Run(strings.ReplaceAll(s.String(), " ", "_"), func(t *testing.T) {
			dir := stopAndResume(t, filepath.Join(t.TempDir(), strconv.Itoa(i)), src, s)
			for id, r := range finalState(t, dir) {
				if r.Status != checkpoint.Succeeded {
					t.Errorf("%s ended %s", id, r.Status)
				}
			}
			got := checkAutoCell(t, dir, autoCellWant{"capped", 16, 16, 3})
			if atlas := atlasLoads(t, dir); !slices.Equal(atlas["capped"], got) {
				t.Errorf("atlas rows %v, want %v", atlas["capped"], got)
			}
		})
	}
}

// atlasLoads are the atlas rows' point keys by cell, in file order.
func atlasLoads(t *testing.T, dir string) map[string][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, campaigndir.Atlas()))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]string{}
	dec := campaigndir.NewAtlasDecoder(f, "atlas")
	for {
		var row schema.AtlasRow
		if err := dec.Next(&row); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		out[row.CellID] = append(out[row.CellID], row.PointLoad().Key())
	}
}

// TestAutoSweepValidate: each mistake in a sweep: auto cell is one problem at its key's
// line:col, saying what is wrong and what is valid, with no cascade (a sweep that failed to
// read is not reported again as a cell without points).
func TestAutoSweepValidate(t *testing.T) {
	const head = "version: 1\ncampaign: bad\nendpoints:\n  main: {url: \"sim://\", model: m}\ncells:\n"
	tests := []struct{ name, cell, want string }{
		{"zero rates", "    sweep: {auto: {rates: 0}}\n", "8:20: cells[0].sweep: sweep.auto.rates: 0: want 1 to 100 rate points"},
		{"fractional rates", "    sweep: {auto: {rates: 2.5}}\n", "8:20: cells[0].sweep: sweep.auto.rates: want a whole number, got 2.5"},
		{"misspelt key", "    sweep: {auto: {rate: 4}}\n", "8:20: cells[0].sweep: sweep.auto.rate: unknown key: valid keys are rates, throughput_concurrency"},
		{"unknown mode", "    sweep: automatic\n", `8:12: cells[0].sweep: sweep: "automatic": want auto, or {auto: {rates, throughput_concurrency}}`},
		{"unknown mapping", "    sweep: {list: {}}\n", "8:13: cells[0].sweep: sweep.list: unknown key: the mapping form is {auto: {rates, throughput_concurrency}}"},
		{"saturating at 1", "    sweep: {auto: {throughput_concurrency: 1}}\n",
			"8:20: cells[0].sweep: sweep.auto.throughput_concurrency: 1: want 2 to 100000 (the saturating point keeps many requests in flight)"},
		{"capped at 1", "    max_in_flight: 1\n    sweep: auto\n",
			"8:20: cells[0].max_in_flight: cell a: sweep: auto's saturating point runs at max_in_flight, 1, the synchronous point's concurrency"},
		{"with concurrencies", "    concurrencies: [1, 2]\n    sweep: auto\n",
			"8:20: cells[0].concurrencies: cell a has both sweep: auto and concurrencies: its points are the ones the sweep finds, so the list would be ignored"},
		{"with rates", "    rates: [1, 2]\n    sweep: auto\n",
			"8:12: cells[0].rates: cell a has both sweep: auto and rates: the sweep spaces its rates between the throughputs it measures"},
		{"with a search", "    search: {slo: \"error_count == 0\", from: 1, to: 8}\n    sweep: auto\n", "9:12: cells[0].sweep: cell a has both sweep: auto and search"},
		{"with stop_when", "    stop_when: \"points >= 2\"\n    sweep: auto\n",
			"8:16: cells[0].stop_when: cell a has both sweep: auto and stop_when: sweep: auto measures all its points"},
		{"with the older rate", "    workload: {shape: aa-1k, request_rate: 3}\n    sweep: auto\n",
			"7:44: cells[0].workload.request_rate: cell a has both sweep: auto and workload.request_rate: the sweep's rate points take the rates it finds"},
	}
	dir := t.TempDir()
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cell := "  - id: a\n    workload: {shape: aa-1k}\n" + tt.cell
			if strings.HasPrefix(tt.cell, "    workload:") {
				cell = "  - id: a\n" + tt.cell
			}
			path := filepath.Join(dir, fmt.Sprintf("bad-%02d.yaml", i))
			if err := os.WriteFile(path, []byte(head+cell), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := testApp().compile(path, nil, "")
			var l diag.List
			if !errors.As(err, &l) {
				t.Fatalf("compile: %v, want positioned problems", err)
			}
			got := make([]string, len(l))
			for j, d := range l {
				got[j] = strings.TrimPrefix(d.Error(), path+":")
			}
			if !reflect.DeepEqual(got, []string{tt.want}) {
				t.Fatalf("problems:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), tt.want)
			}
		})
	}
}

// TestAutoSweepEditReusesAnchors: sweep: auto's settings are not in its points' fingerprints,
// so raising rates from 2 to 4 re-uses c1, the saturating point and the two rates the finer
// spacing shares (the middle and the peak), and measures only the two new ones.
func TestAutoSweepEditReusesAnchors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	write := func(rates int) string {
		path := filepath.Join(dir, fmt.Sprintf("c%d.yaml", rates))
		src := fmt.Sprintf(sweepResumeCampaign, fmt.Sprintf("max_in_flight: 4\n    sweep: {auto: {rates: %d}}", rates))
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	if b, err := perfdagChild("run", write(2), "--out", out).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	before := readSweep(t, out)
	b, err := perfdagChild("run", write(4), "--out", out, "--json").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	after := readSweep(t, out)
	var sum struct {
		Nodes []struct{ Node, Outcome string } `json:"nodes"`
	}
	if i := bytes.IndexByte(b, '{'); i < 0 || json.Unmarshal(b[i:], &sum) != nil {
		t.Fatalf("no JSON summary:\n%s", b)
	}
	ran := map[string]string{}
	for _, n := range sum.Nodes {
		ran[n.Node] = n.Outcome
	}
	if len(before.Auto.Rates) != 2 || len(after.Auto.Rates) != 4 || after.Auto.Rates[1] != before.Auto.Rates[0] || after.Auto.Rates[3] != before.Auto.Rates[1] {
		t.Fatalf("rates %v then %v: the finer spacing no longer shares the middle and the peak", before.Auto.Rates, after.Auto.Rates)
	}
	var got []string
	for _, p := range after.Probes {
		got = append(got, p.PointLoad().Key()+"="+ran["run-shape[knee/"+p.PointLoad().Key()+"]"])
	}
	key := func(r float64) string { return "r" + schema.FormatRate(r) + "-cap4" }
	a := after.Auto.Rates
	want := []string{"c1=reused", "c4=reused", key(a[0]) + "=ran", key(a[1]) + "=reused", key(a[2]) + "=ran", key(a[3]) + "=reused"}
	if !slices.Equal(got, want) {
		t.Fatalf("after the edit: %v, want %v", got, want)
	}
}
