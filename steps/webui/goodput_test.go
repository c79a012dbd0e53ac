package webui

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// A campaign whose cell declares a per-request slo shows each point's goodput and SLO
// attainment in its points table and a goodput table on the point page, as point.json states
// them; a campaign without one has neither.
func TestGoodputShown(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "slo")
	runTiny(t, dir, func(s string) string {
		return strings.Replace(s, "    requests_per_point: 2x\n", "    requests_per_point: 2x\n    slo: {ttft_ms: 1000, tpot_ms: 0.3}\n", 1)
	})
	finished(t, root, "plain")
	ts := serve(t, Options{Roots: []string{root}})
	var p schema.Point
	if _, err := campaigndir.ReadJSON(dir, campaigndir.Point("aa-1k", schema.Conc(2)), &p); err != nil {
		t.Fatal(err)
	}
	if p.Goodput == nil || p.SLOAttainment == nil || p.GoodputReqS == nil {
		t.Fatalf("the point has no goodput: %+v", p.Goodput)
	}
	code, body := get(t, ts, "/c/slo/")
	if code != 200 {
		t.Fatalf("campaign page: %d", code)
	}
	for _, want := range []string{"<th>goodput req/s</th><th>SLO attained</th>",
		`data-key="goodput_req_s" title="` + exact(*p.GoodputReqS) + `">` + fig(*p.GoodputReqS) + `<`,
		`data-key="slo_attainment" title="` + exact(*p.SLOAttainment) + `">` + attained(*p.SLOAttainment) + `<`} {
		if !strings.Contains(body, want) {
			t.Errorf("campaign page lacks %s", want)
		}
	}
	code, body = get(t, ts, "/c/slo/point/aa-1k/2")
	if code != 200 {
		t.Fatalf("point page: %d", code)
	}
	for _, want := range []string{"<h2>Goodput</h2>", "Per-request SLO TTFT &lt;= 1000 ms, TPOT &lt;= 0.3 ms",
		`data-key="good_requests">` + itoa(int64(p.Goodput.Good)) + `<`,
		`data-key="goodput_requests">` + itoa(int64(p.Goodput.Requests)) + " (" + itoa(int64(p.Goodput.Failed)) + ")<",
		`data-key="slo_attainment" title="` + exact(*p.SLOAttainment) + `">` + attained(*p.SLOAttainment),
		`data-key="goodput_missed">` + itoa(int64(p.Goodput.MissedTTFT)) + " / " + itoa(int64(p.Goodput.MissedTPOT)) + " / 0<"} {
		if !strings.Contains(body, want) {
			t.Errorf("point page lacks %s", want)
		}
	}
	_, body = get(t, ts, "/c/plain/")
	_, point := get(t, ts, "/c/plain/point/aa-1k/2")
	if strings.Contains(body, "goodput") || strings.Contains(point, "Goodput") {
		t.Error("a campaign without slo shows goodput")
	}
}

func TestAttained(t *testing.T) {
	for v, want := range map[float64]string{1: "100.0 %", 0.995: "99.5 %", 0.9996: "99.96 %", 0.99999: "99.999 %", 0: "0.0 %"} {
		if got := attained(v); got != want {
			t.Errorf("attained(%v) = %q, want %q", v, got, want)
		}
	}
}
