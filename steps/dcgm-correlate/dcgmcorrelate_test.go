package dcgmcorrelate_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/run"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	dcgmcorrelate "github.com/perfdag/perfdag/steps/dcgm-correlate"
	"github.com/perfdag/perfdag/steps/telemetry/dcgm"
	"github.com/perfdag/perfdag/steps/telemetry/promscrape"
	"github.com/perfdag/perfdag/steps/testkit"
	"github.com/perfdag/perfdag/steps/testkit/stepstest"
)

const token = "s3cret-prometheus-token"

// campaign is one cell "a" on a TP2 endpoint (2 GPUs) with c1 and c2, correlated by `with`.
func campaign(endpoint, with string) string {
	return `version: 1
campaign: dcgm
endpoints:
  main: {url: "http://127.0.0.1:9", model: m` + endpoint + `}
defaults: {hardware: B200, quant: FP8, tensor_parallel: 2}
cells:
  - {id: a, workload: {shape: aa-1k}, concurrencies: [1, 2]}
pipeline:
  - {id: run, kind: run-shape}
  - {id: dcgm, kind: dcgm-correlate, needs: [run]` + with + `}
`
}

// points writes c1 and c2's point.json: output 400·c tok/s over the windows of telemetry_test.go.
func points(t *testing.T, dir string) {
	for _, c := range []int{1, 2} {
		start, end := window(c)
		stepstest.WritePoint(t, dir, schema.Point{
			Schema: "point_v1", Cell: "a", Concurrency: c, NumPrompts: 4 * c, RequestCount: 4 * c, Status: "ok",
			StartedAt: start.Format(time.RFC3339Nano), EndedAt: end.Format(time.RFC3339Nano), OutputTokenThroughput: 400 * float64(c),
		})
	}
}

func readCorrelation(t *testing.T, dir string) schema.DCGMCorrelation {
	t.Helper()
	var c schema.DCGMCorrelation
	b, err := os.ReadFile(campaigndir.Abs(dir, campaigndir.DCGMCorrelation("a")))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSameMeansFromEverySource feeds one synthetic capture to the three sources — a frozen
// YAML of samples, the exporter samples run-shape keeps, and a Prometheus API double — through
// the engine, and expects identical means, grounding and tokens per watt from each.
func TestSameMeansFromEverySource(t *testing.T) {
	all := telemetry()
	var queries atomic.Int32
	prom := fakePrometheus(t, all, token, &queries)
	defer prom.Close()
	t.Setenv("PROM_TOKEN", token)

	// Expected (see telemetry): c1 sm 0.5, dram 0.4, NVLink 2e9, 400 W/GPU →
	// tokens/W = 400 tok/s ÷ (400 W × 2 GPUs) = 0.5; c2 sm 0.6, dram 0.5, 500 W/GPU →
	// 800 ÷ (500 × 2) = 0.8. Result: max 0.8 tok/W, power avg (400 + 500)/2 = 450 W.
	want := []struct{ sm, dram, nvlink, power, tpw float64 }{{0.5, 0.4, 2e9, 400, 0.5}, {0.6, 0.5, 2e9, 500, 0.8}}
	sources := []struct {
		name, endpoint, with string
		prepare              func(t *testing.T, dir, base string)
	}{
		{"frozen", "", `, with: {source: frozen, file: "dcgm/{cell}.yaml"}`, func(t *testing.T, dir, base string) {
			testkit.WriteFile(t, filepath.Join(base, "dcgm", "a.yaml"), frozenYAML(all, "W"))
		}},
		{"exporter", ", dcgm_url: \"http://node-7:9400/metrics\"", "", func(t *testing.T, dir, base string) {
			for _, c := range []int{1, 2} {
				if _, err := campaigndir.WriteJSON(dir, campaigndir.DCGMSamples("a", schema.Conc(c)), dcgm.NewSamples("a", schema.Conc(c), "http://node-7:9400/metrics", samplesOf(all, c), promscrape.PollStats{Scrapes: 9})); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"prometheus", "", `, with: {source: prometheus, url: "` + prom.URL + `", host: node-7, matcher: "pod=\"vllm-0\"", bearer_token_env: PROM_TOKEN}`, func(*testing.T, string, string) {}},
	}
	for _, src := range sources {
		t.Run(src.name, func(t *testing.T) {
			dir, base := t.TempDir(), t.TempDir()
			points(t, dir)
			src.prepare(t, dir, base)
			out, recs := stepstest.Run(t, dir, base, campaign(src.endpoint, src.with), nil)
			if out["dcgm[a]"] != run.OutRan {
				t.Fatalf("dcgm[a] %s: %s", out["dcgm[a]"], recs["dcgm[a]"].Error)
			}
			corr := readCorrelation(t, dir)
			if corr.Source != src.name || corr.Cell != "a" || !corr.DCGMGrounded || corr.SolRigor != "L3" || len(corr.Points) != 2 {
				t.Fatalf("correlation %+v", corr)
			}
			for i, w := range want {
				p := corr.Points[i]
				got := []float64{val(p.SMActive), val(p.DRAMActive), val(p.NVLinkBytesPerS), val(p.PowerWattsPerGPU), val(p.TokensPerWatt)}
				exp := []float64{w.sm, w.dram, w.nvlink, w.power, w.tpw}
				for j := range got {
					if math.Abs(got[j]-exp[j]) > 1e-9*math.Max(1, exp[j]) {
						t.Errorf("c%d field %d = %v, want %v", p.Concurrency, j, got[j], exp[j])
					}
				}
			}
			var res dcgmcorrelate.Result
			stepstest.Result(t, recs, "dcgm[a]", &res)
			if res.Source != src.name || !res.DCGMGrounded || res.SolRigor != "L3" || res.Points != 2 || res.PointsWithData != 2 ||
				math.Abs(res.TokensPerWattMax-0.8) > 1e-9 || math.Abs(res.PowerWattsPerGPUAvg-450) > 1e-9 ||
				math.Abs(res.DRAMActiveAvg-0.45) > 1e-9 || math.Abs(res.SMActiveAvg-0.55) > 1e-9 {
				t.Errorf("result %+v", res)
			}
			if leaked := grep(t, dir, token); leaked != "" {
				t.Errorf("the bearer token was written to %s", leaked)
			}
		})
	}
	if queries.Load() < 2 {
		t.Errorf("the Prometheus double answered %d queries, want one per point", queries.Load())
	}
}

func val(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// grep returns the first file under dir containing s.
func grep(t *testing.T, dir, s string) string {
	var found string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || found != "" {
			return err
		}
		if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), s) {
			found = path
		}
		return nil
	})
	return found
}

// TestMissingSamplesAndBadFiles: a point without exporter samples leaves the cell ungrounded
// without failing it; a frozen file in mW fails the node naming the file and the field.
func TestMissingSamplesAndBadFiles(t *testing.T) {
	all := telemetry()
	t.Run("exporter file missing for c2", func(t *testing.T) {
		dir := t.TempDir()
		points(t, dir)
		if _, err := campaigndir.WriteJSON(dir, campaigndir.DCGMSamples("a", schema.Conc(1)), dcgm.NewSamples("a", schema.Conc(1), "sim://", samplesOf(all, 1), promscrape.PollStats{})); err != nil {
			t.Fatal(err)
		}
		out, recs := stepstest.Run(t, dir, t.TempDir(), strings.Replace(campaign("", ""), `"http://127.0.0.1:9"`, `"sim://"`, 1), nil)
		if out["dcgm[a]"] != run.OutRan {
			t.Fatalf("dcgm[a] %s: %s", out["dcgm[a]"], recs["dcgm[a]"].Error)
		}
		var res dcgmcorrelate.Result
		stepstest.Result(t, recs, "dcgm[a]", &res)
		if res.DCGMGrounded || res.SolRigor != "L1" || res.Points != 2 || res.PointsWithData != 1 || res.MissingExporterFiles != 1 {
			t.Errorf("result %+v: want ungrounded, 1 of 2 points with data, 1 missing file", res)
		}
		if !strings.Contains(recs["dcgm[a]"].Summary, "1 point without exporter samples") {
			t.Errorf("summary %q", recs["dcgm[a]"].Summary)
		}
	})
	t.Run("frozen file in mW", func(t *testing.T) {
		dir, base := t.TempDir(), t.TempDir()
		points(t, dir)
		testkit.WriteFile(t, filepath.Join(base, "a.yaml"), frozenYAML(all, "mW"))
		out, recs := stepstest.Run(t, dir, base, campaign("", `, with: {source: frozen, file: a.yaml}`), nil)
		if out["dcgm[a]"] != run.OutFailed {
			t.Fatalf("dcgm[a] %s, want failed", out["dcgm[a]"])
		}
		msg := recs["dcgm[a]"].Error
		if !strings.Contains(msg, "a.yaml:2:") || !strings.Contains(msg, "units.power") || !strings.Contains(msg, "mW") {
			t.Errorf("error does not name the file, line and unit: %s", msg)
		}
		if _, err := os.Stat(campaigndir.Abs(dir, campaigndir.DCGMCorrelation("a"))); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("a failed correlation left its file behind (%v)", err)
		}
	})
}

// TestEditingFrozenFileReRunsItsCellOnly: each cell reads dcgm/{cell}.yaml; editing b's file
// re-runs dcgm[b] alone.
func TestEditingFrozenFileReRunsItsCellOnly(t *testing.T) {
	dir, base := t.TempDir(), t.TempDir()
	points(t, dir)
	src := strings.Replace(campaign("", `, with: {source: frozen, file: "dcgm/{cell}.yaml"}`),
		"concurrencies: [1, 2]}", "concurrencies: [1, 2]}\n  - {id: b, workload: {shape: aa-1k}, concurrencies: [1]}", 1)
	frozen := frozenYAML(telemetry(), "W")
	testkit.WriteFile(t, filepath.Join(base, "dcgm", "a.yaml"), frozen)
	testkit.WriteFile(t, filepath.Join(base, "dcgm", "b.yaml"), frozen)
	if out, _ := stepstest.Run(t, dir, base, src, nil); out["dcgm[a]"] != run.OutRan || out["dcgm[b]"] != run.OutRan {
		t.Fatalf("first run %v", out)
	}
	testkit.WriteFile(t, filepath.Join(base, "dcgm", "b.yaml"), frozen+"# re-captured\n")
	out, _ := stepstest.Run(t, dir, base, src, nil)
	if out["dcgm[a]"] != run.OutReused || out["dcgm[b]"] != run.OutRan {
		t.Errorf("after editing b.yaml: %v, want a reused and b ran", out)
	}
}

func TestCheckRejectsBadParams(t *testing.T) {
	two := "\n  - {id: b, workload: {shape: aa-1k}, concurrencies: [1]}"
	withTwo := func(s string) string {
		return strings.Replace(s, "concurrencies: [1, 2]}", "concurrencies: [1, 2]}"+two, 1)
	}
	tests := []struct {
		name, src, want string
		line            int
	}{
		{"unknown source", campaign("", `, with: {source: dcgmi}`), `with.source: "dcgmi" is not one of frozen, prometheus, exporter`, 10},
		{"frozen without file", campaign("", `, with: {source: frozen}`), "source frozen needs file:", 10},
		{"prometheus without url", campaign("", `, with: {source: prometheus}`), "source prometheus needs url:", 10},
		{"prometheus bad url", campaign("", `, with: {url: "prometheus:9090"}`), "an http(s) base URL", 10},
		{"no source at all", campaign("", ""), "exporter samples need a dcgm_url", 10},
		{"file with exporter", campaign(`, dcgm_url: "http://n:9400/metrics"`, `, with: {source: exporter, file: x.yaml}`), "file is read only by source frozen", 10},
		{"prometheus settings with frozen", campaign("", `, with: {file: x.yaml, matcher: "pod=\"x\""}`), "Prometheus settings given, but the source is frozen", 10},
		{"shared frozen file", withTwo(campaign("", `, with: {source: frozen, file: dcgm.yaml}`)), "all 2 cells would read the same frozen file", 11},
		{"unknown key", campaign("", `, with: {source: frozen, fiel: x.yaml}`), `unknown key "fiel"`, 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d := stepstest.OneProblem(t, tc.src); d.Line != tc.line || !strings.Contains(d.Message, tc.want) {
				t.Errorf("got %s, want line %d: %s", d.Error(), tc.line, tc.want)
			}
		})
	}
	for _, ok := range []string{
		campaign(`, dcgm_url: "http://n:9400/metrics"`, ""),
		strings.Replace(campaign("", ""), `"http://127.0.0.1:9"`, `"sim://"`, 1),
		withTwo(campaign("", `, with: {source: frozen, file: "dcgm/{cell}.yaml"}`)),
		campaign("", `, with: {url: "http://prom:9090", bearer_token_env: PROM_TOKEN}`),
	} {
		if err := stepstest.Validate(t, ok); err != nil {
			t.Errorf("valid campaign rejected: %v\n%s", err, ok)
		}
	}
}

// TestDefaultPipelineCellWithoutExporter: the default pipeline correlates every cell once any
// endpoint exports DCGM; a cell on an endpoint that does not validates, and its node records
// it ungrounded, naming no correlation file (a stale one is never read), instead of failing.
func TestDefaultPipelineCellWithoutExporter(t *testing.T) {
	src := `version: 1
campaign: mixed
endpoints:
  gpu: {url: "sim://", model: m}
  other: {url: "http://127.0.0.1:9", model: m}
cells:
  - {id: a, endpoint: gpu, workload: {shape: aa-1k}, concurrencies: [1]}
  - {id: b, endpoint: other, workload: {shape: aa-1k}, concurrencies: [1]}
`
	if err := stepstest.Validate(t, src); err != nil {
		t.Fatalf("default pipeline rejected: %v", err)
	}
	dir := t.TempDir()
	testkit.WriteFile(t, campaigndir.Abs(dir, campaigndir.DCGMCorrelation("b")), "{}")
	task := &engine.Task{Node: "dcgm-correlate[b]", Step: "dcgm-correlate", Campaign: &schema.Campaign{Campaign: "mixed"},
		Cell: &schema.Cell{ID: "b", Endpoint: "other", Concurrencies: []int{1}}, Endpoint: &schema.Endpoint{URL: "http://127.0.0.1:9"},
		Params: &dcgmcorrelate.Params{}, Dir: dir, BaseDir: dir}
	out, err := dcgmcorrelate.Kind.Run(context.Background(), task)
	if err != nil {
		t.Fatal(err)
	}
	res := out.Value.(*dcgmcorrelate.Result)
	if res.Source != "none" || res.DCGMGrounded || res.SolRigor != "L1" || len(out.Outputs) != 0 {
		t.Errorf("result %+v, outputs %v", res, out.Outputs)
	}
	if res.Correlation != "" {
		t.Errorf("result names correlation %q for a cell without a source", res.Correlation)
	}
}
