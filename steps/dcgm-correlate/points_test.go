package dcgmcorrelate

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	runshape "github.com/perfdag/perfdag/steps/run-shape"
	"github.com/perfdag/perfdag/steps/telemetry/dcgm"
	"github.com/perfdag/perfdag/steps/telemetry/promscrape"
	"github.com/perfdag/perfdag/steps/testkit"
)

func TestPointsWindows(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	ns := func(d time.Duration) int64 { return t0.Add(d).UnixNano() }
	tests := []struct {
		name      string
		files     map[string]string // relative to cells/a/raw/c4
		wantStart time.Time
		wantEnd   time.Time
		wantTPS   float64
		measured  bool
		err       string
	}{
		{"point.json window", map[string]string{"point": `{"started_at": "2026-05-01T10:00:00.5Z", "ended_at": "2026-05-01T10:01:00Z", "output_token_throughput": 321}`},
			t0.Add(500 * time.Millisecond), t0.Add(time.Minute), 321, true, ""},
		// Without started_at/ended_at the profiling records give it: the warm-up request (earlier)
		// does not count; the last end is the later of end_ns and last_content_ns.
		{"records fallback", map[string]string{
			"point": `{"output_token_throughput": 10}`,
			"records": strings.Join([]string{
				`{"index": 0, "phase": "warmup", "start_ns": ` + itoa(ns(-time.Minute)) + `, "end_ns": ` + itoa(ns(-30*time.Second)) + `}`,
				`{"index": 1, "phase": "profiling", "start_ns": ` + itoa(ns(2*time.Second)) + `, "end_ns": ` + itoa(ns(9*time.Second)) + `}`,
				``,
				`{"index": 2, "phase": "profiling", "start_ns": ` + itoa(ns(time.Second)) + `, "end_ns": ` + itoa(ns(5*time.Second)) + `, "last_content_ns": ` + itoa(ns(11*time.Second)) + `}`,
			}, "\n")},
			t0.Add(time.Second), t0.Add(11 * time.Second), 10, true, ""},
		{"no point.json", nil, time.Time{}, time.Time{}, 0, false, ""},
		{"bad started_at", map[string]string{"point": `{"started_at": "yesterday", "ended_at": "2026-05-01T10:01:00Z"}`},
			time.Time{}, time.Time{}, 0, false, campaigndir.Point("a", schema.Conc(4)) + ": field started_at: \"yesterday\" is not an RFC 3339 time"},
		{"end before start", map[string]string{"point": `{"started_at": "2026-05-01T10:01:00Z", "ended_at": "2026-05-01T10:00:00Z"}`},
			time.Time{}, time.Time{}, 0, false, "field ended_at: 2026-05-01T10:00:00Z is before started_at"},
		{"malformed point.json", map[string]string{"point": `{"started_at": `}, time.Time{}, time.Time{}, 0, false, "decode"},
		{"malformed records", map[string]string{"point": `{}`, "records": "{\"phase\": \"profiling\"}\nnot json\n"},
			time.Time{}, time.Time{}, 0, false, campaigndir.Records("a", schema.Conc(4)) + ":2:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			files := campaigndir.PointFiles{Cell: "a", Concurrency: 4}
			for name, s := range tc.files {
				rel := campaigndir.Point("a", schema.Conc(4))
				if name == "records" {
					rel = campaigndir.Records("a", schema.Conc(4))
					files.Records = rel
				} else {
					files.Point = rel
				}
				testkit.WriteFile(t, campaigndir.Abs(dir, rel), s)
			}
			var ups []engine.Upstream
			if files.Point != "" {
				ups = append(ups, engine.Upstream{Result: runshape.ResultOf(schema.Point{}, files)})
			}
			pts, err := Points(campaigndir.Unrecorded(dir), &schema.Cell{ID: "a", Concurrencies: []int{4, 4}}, ups)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want it to contain %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(pts) != 1 {
				t.Fatalf("%d points, want 1 (duplicate concurrencies collapse)", len(pts))
			}
			p := pts[0]
			if p.Measured != tc.measured || p.OutputTokPerS != tc.wantTPS || !p.Window.Start.Equal(tc.wantStart) || !p.Window.End.Equal(tc.wantEnd) || p.Window.Load != schema.Conc(4) {
				t.Errorf("point %+v, want measured %v, tps %v, window %v – %v", p, tc.measured, tc.wantTPS, tc.wantStart, tc.wantEnd)
			}
		})
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// TestSamplesRoundTrip writes a point's samples as run-shape does and reads them back as
// dcgm-correlate does; a record claiming another cell, concurrency or schema is refused with
// the field named.
func TestSamplesRoundTrip(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2026, 5, 1, 10, 0, 1, 0, time.UTC)
	in := []dcgm.GPUSample{{At: at, GPU: "0", DCGMFields: schema.DCGMFields{SMActive: schema.F(0.5)}}}
	rel, err := campaigndir.WriteJSON(dir, campaigndir.DCGMSamples("a", schema.Conc(8)),
		dcgm.NewSamples("a", schema.Conc(8), "http://user:pw@node:9400/metrics?x=1", in, promscrape.PollStats{Scrapes: 3, Failures: 1}))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(campaigndir.Abs(dir, rel))
	if strings.Contains(string(raw), "pw") || strings.Contains(string(raw), "x=1") {
		t.Errorf("exporter URL not redacted: %s", raw)
	}
	r := campaigndir.Unrecorded(dir)
	read := func() (dcgm.Samples, error) {
		var doc dcgm.Samples
		if err := r.JSON(rel, &doc); err != nil {
			return doc, err
		}
		return doc, doc.Check(rel, "a", schema.Conc(8))
	}
	doc, err := read()
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if len(doc.Samples) != 1 || !doc.Samples[0].At.Equal(at) || *doc.Samples[0].SMActive != 0.5 || doc.Scrapes != 3 || doc.Failures != 1 {
		t.Errorf("round trip %+v", doc)
	}
	bad := []struct{ body, want string }{
		{`{"schema": "dcgm_samples_v1", "cell": "b", "concurrency": 8, "samples": []}`, "field cell"},
		{`{"schema": "dcgm_samples_v1", "cell": "a", "concurrency": 4, "samples": []}`, "field concurrency"},
		{`{"schema": "v0", "cell": "a", "concurrency": 8, "samples": []}`, "field schema"},
		{`{"schema": "dcgm_samples_v1", "cell": "a", "concurrency": 8, "samples": [{"gpu": "0"}]}`, "samples[0].t"},
		{`{"schema": "dcgm_samples_v1", "cell": "a", "concurrency": 8, "sample": []}`, "unknown field"},
	}
	for _, b := range bad {
		testkit.WriteFile(t, campaigndir.Abs(dir, rel), b.body)
		if _, err := read(); err == nil || !strings.Contains(err.Error(), b.want) || !strings.Contains(err.Error(), "c8.json") {
			t.Errorf("%s: error %v, want the file and %q", b.body, err, b.want)
		}
	}
}

// A searched cell lists no concurrencies: its points are the probes its upstream measured,
// each read like a listed point (issue 27: its correlation was empty).
func TestPointsOfSearchedCell(t *testing.T) {
	dir := t.TempDir()
	var ups []engine.Upstream
	for _, c := range []int{8, 1} {
		files := campaigndir.PointFiles{Cell: "a", Concurrency: c, Point: campaigndir.Point("a", schema.Conc(c))}
		testkit.WriteFile(t, campaigndir.Abs(dir, files.Point), `{"started_at": "2026-05-01T10:00:00Z", "ended_at": "2026-05-01T10:01:00Z", "output_token_throughput": `+strconv.Itoa(10*c)+`}`)
		ups = append(ups, engine.Upstream{Result: runshape.ResultOf(schema.Point{}, files)})
	}
	cell := &schema.Cell{ID: "a", Search: &schema.Search{SLO: "itl_avg_ms <= 50", From: 1, To: 8}}
	pts, err := Points(campaigndir.Unrecorded(dir), cell, ups)
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 2 || pts[0].Load != schema.Conc(1) || pts[1].Load != schema.Conc(8) || !pts[0].Measured || !pts[1].Measured || pts[1].OutputTokPerS != 80 {
		t.Fatalf("points %+v, want c1 and c8 measured", pts)
	}
}
