package baseline

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
)

func f(v float64) *float64 { return &v }

// TestCompareEveryRule walks every tolerance row of seed 002 (plus errors) through a change
// inside the tolerance, one beyond it, one exactly at it, a large change in the good
// direction, and a null side. Expected deltas are computed by hand in the comments.
func TestCompareEveryRule(t *testing.T) {
	cases := []struct {
		name      string
		metric    string
		base, cur *float64
		tol       Tolerances
		delta     *float64 // nil: not computed
		pct       *float64 // nil: not a relative metric, or not computed
		verdict   string
	}{
		// throughput_toks_per_s: 3 %, lower is worse.
		// 1000 → 975: delta −25, −25/1000 = −2.5 % → within 3 %.
		{"throughput within", "throughput_toks_per_s", f(1000), f(975), nil, f(-25), f(-2.5), Green},
		// 1000 → 960: −40 = −4 % → beyond 3 %.
		{"throughput beyond", "throughput_toks_per_s", f(1000), f(960), nil, f(-40), f(-4), Red},
		// 1000 → 970: −30 = −3 % exactly → within (equal counts as within).
		{"throughput at tolerance", "throughput_toks_per_s", f(1000), f(970), nil, f(-30), f(-3), Green},
		// 1000 → 1500: +50 % is an improvement → GREEN however large.
		{"throughput better", "throughput_toks_per_s", f(1000), f(1500), nil, f(500), f(50), Green},
		{"throughput null current", "throughput_toks_per_s", f(1000), nil, nil, nil, nil, NullLegacy},

		// ttft_p50_ms: 5 %, higher is worse. 200 → 209: +9/200 = +4.5 %; 200 → 212: +6 %.
		{"ttft p50 within", "ttft_p50_ms", f(200), f(209), nil, f(9), f(4.5), Green},
		{"ttft p50 beyond", "ttft_p50_ms", f(200), f(212), nil, f(12), f(6), Red},
		// 200 → 100: −50 % is faster → GREEN.
		{"ttft p50 better", "ttft_p50_ms", f(200), f(100), nil, f(-100), f(-50), Green},
		// ttft_p95_ms: 10 %. 400 → 436: +36/400 = +9 %; 400 → 444: +11 %.
		{"ttft p95 within", "ttft_p95_ms", f(400), f(436), nil, f(36), f(9), Green},
		{"ttft p95 beyond", "ttft_p95_ms", f(400), f(444), nil, f(44), f(11), Red},
		// ttft_p99_ms: 15 %. 800 → 912: +112/800 = +14 %; 800 → 928: +16 %.
		{"ttft p99 within", "ttft_p99_ms", f(800), f(912), nil, f(112), f(14), Green},
		{"ttft p99 beyond", "ttft_p99_ms", f(800), f(928), nil, f(128), f(16), Red},
		// itl_p50_ms: 3 %, higher is worse. 20 → 20.5: +0.5/20 = +2.5 %; 20 → 20.8: +4 %.
		{"itl within", "itl_p50_ms", f(20), f(20.5), nil, f(0.5), f(2.5), Green},
		{"itl beyond", "itl_p50_ms", f(20), f(20.8), nil, f(0.8), f(4), Red},
		// tps_per_user: 3 %, lower is worse. 50 → 49: −1/50 = −2 %; 50 → 48: −4 %.
		{"tps/user within", "tps_per_user", f(50), f(49), nil, f(-1), f(-2), Green},
		{"tps/user beyond", "tps_per_user", f(50), f(48), nil, f(-2), f(-4), Red},
		{"tps/user better", "tps_per_user", f(50), f(80), nil, f(30), f(60), Green},
		// request_latency_p50_ms: 5 %. 10000 → 10400: +4 %; 10000 → 10600: +6 %.
		{"latency within", "request_latency_p50_ms", f(10000), f(10400), nil, f(400), f(4), Green},
		{"latency beyond", "request_latency_p50_ms", f(10000), f(10600), nil, f(600), f(6), Red},
		{"latency null baseline", "request_latency_p50_ms", nil, f(10600), nil, nil, nil, NullLegacy},
		// errors: 0 (count), higher is worse. 0 → 1: +1 > 0 → RED; 3 → 0 → GREEN.
		{"errors new", "errors", f(0), f(1), nil, f(1), nil, Red},
		{"errors fewer", "errors", f(3), f(0), nil, f(-3), nil, Green},
		{"errors override", "errors", f(0), f(2), Tolerances{"errors": 2}, f(2), nil, Green},

		// prefix_cache_hit_rate_post: 2 absolute points, lower is worse; never percent-of-percent.
		// 40 → 38.5: −1.5 pts → within (as a relative change it would be −3.75 %).
		{"prefix within", "prefix_cache_hit_rate_post", f(40), f(38.5), nil, f(-1.5), nil, Green},
		// 40 → 37.5: −2.5 pts → beyond 2 pts.
		{"prefix beyond", "prefix_cache_hit_rate_post", f(40), f(37.5), nil, f(-2.5), nil, Red},
		// 2 → 1: −1 pt → within although it halves the rate (−50 % relative).
		{"prefix small base", "prefix_cache_hit_rate_post", f(2), f(1), nil, f(-1), nil, Green},
		{"prefix better", "prefix_cache_hit_rate_post", f(40), f(90), nil, f(50), nil, Green},
		// gpu_cache_usage_perc_peak: 5 pts, higher is worse. 60 → 64: +4; 60 → 66: +6.
		{"kv usage within", "gpu_cache_usage_perc_peak", f(60), f(64), nil, f(4), nil, Green},
		{"kv usage beyond", "gpu_cache_usage_perc_peak", f(60), f(66), nil, f(6), nil, Red},
		{"kv usage lower", "gpu_cache_usage_perc_peak", f(60), f(10), nil, f(-50), nil, Green},
		// kernel_class_gpu_pct.<any>: 3 pts, higher is worse. tp_all_reduce 10 → 12.5: +2.5;
		// 10 → 15: +5 (the seed's "actionable 5pp delta").
		{"kernel within", "kernel_class_gpu_pct.tp_all_reduce", f(10), f(12.5), nil, f(2.5), nil, Green},
		{"kernel beyond", "kernel_class_gpu_pct.tp_all_reduce", f(10), f(15), nil, f(5), nil, Red},
		{"kernel class override", "kernel_class_gpu_pct.tp_all_reduce", f(10), f(15), Tolerances{KernelClassPrefix: 6}, f(5), nil, Green},
		{"kernel one class override", "kernel_class_gpu_pct.fp8_bmm", f(30), f(34), Tolerances{KernelClassPrefix: 6, "kernel_class_gpu_pct.fp8_bmm": 2}, f(4), nil, Red},
		{"kernel null", "kernel_class_gpu_pct.mla_attention", nil, f(12), nil, nil, nil, NullLegacy},
		// cpu_spinpoll_pct: 5 pts, higher is worse. 8 → 12: +4; 8 → 14: +6.
		{"spinpoll within", "cpu_spinpoll_pct", f(8), f(12), nil, f(4), nil, Green},
		{"spinpoll beyond", "cpu_spinpoll_pct", f(8), f(14), nil, f(6), nil, Red},
		{"spinpoll null both", "cpu_spinpoll_pct", nil, nil, nil, nil, nil, NullLegacy},
		// An override of a relative metric: ttft_p50 +6 % is within 8 %.
		{"ttft override", "ttft_p50_ms", f(200), f(212), Tolerances{"ttft_p50_ms": 8}, f(12), f(6), Green},
		// A zero baseline has no percentage: any rise of a higher-is-worse metric is RED.
		{"zero base worse", "ttft_p50_ms", f(0), f(1), nil, f(1), nil, Red},
		{"zero base same", "ttft_p50_ms", f(0), f(0), nil, f(0), nil, Green},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			row := compare(tc.metric, tc.base, tc.cur, tc.tol)
			if row.Verdict != tc.verdict {
				t.Errorf("verdict %s, want %s (row %+v)", row.Verdict, tc.verdict, row)
			}
			checkPtr(t, "delta", row.Delta, tc.delta)
			checkPtr(t, "delta_pct", row.DeltaPct, tc.pct)
		})
	}
}

func checkPtr(t *testing.T, what string, got, want *float64) {
	t.Helper()
	switch {
	case want == nil && got != nil:
		t.Errorf("%s = %v, want null", what, *got)
	case want != nil && got == nil:
		t.Errorf("%s = null, want %v", what, *want)
	case want != nil && math.Abs(*got-*want) > 1e-9:
		t.Errorf("%s = %v, want %v", what, *got, *want)
	}
}

func doc(metrics map[string]schema.PerfBenchPoint) *schema.PerfBench {
	return &schema.PerfBench{
		Schema: schema.SchemaPerfBench, ModelPath: "org/m",
		Workload: schema.PerfBenchWorkload{InputTokenBand: "1k", OutputTokenBand: "1k", Dataset: "synthetic"},
		Metrics:  metrics,
	}
}

func point(tput, ttft float64, errors int) schema.PerfBenchPoint {
	return schema.PerfBenchPoint{
		ThroughputToksPerS: f(tput), TTFTP50Ms: f(ttft), TTFTP95Ms: f(ttft * 2), TTFTP99Ms: f(ttft * 3),
		ITLP50Ms: f(10), TPSPerUser: f(100), RequestLatencyP50Ms: f(1000), Errors: errors,
	}
}

func TestDiffWholeDocument(t *testing.T) {
	base := doc(map[string]schema.PerfBenchPoint{"1": point(100, 50, 0), "16": point(1000, 80, 0), "32": point(1500, 120, 0)})
	base.ServerMetricsDelta.PrefixCacheHitRatePost = f(40)
	base.KernelClassGPUPct = map[string]*float64{"tp_all_reduce": f(10)}
	cur := doc(map[string]schema.PerfBenchPoint{"1": point(99, 50, 0), "16": point(950, 80, 0), "64": point(1700, 200, 0)})
	cur.ServerMetricsDelta.PrefixCacheHitRatePost = f(39)
	cur.KernelClassGPUPct = map[string]*float64{"tp_all_reduce": f(11), "fp8_bmm": f(30)}

	d, err := Diff(base, cur, nil)
	if err != nil {
		t.Fatal(err)
	}
	// c16 throughput 1000 → 950 = −5 % (RED); c32 is missing from the current run: all 8 of its
	// metrics are RED; c64 is new and not compared.
	verdicts := map[string]string{}
	for _, r := range d.Rows {
		verdicts[rowKey(r)] = r.Verdict
	}
	want := map[string]string{
		"1/throughput_toks_per_s":              Green, // −1 %
		"16/throughput_toks_per_s":             Red,
		"32/throughput_toks_per_s":             Red,
		"32/errors":                            Red,
		"0/prefix_cache_hit_rate_post":         Green, // −1 pt
		"0/gpu_cache_usage_perc_peak":          NullLegacy,
		"0/kernel_class_gpu_pct.tp_all_reduce": Green, // +1 pt
		"0/kernel_class_gpu_pct.fp8_bmm":       NullLegacy,
		"0/cpu_spinpoll_pct":                   NullLegacy,
	}
	for k, v := range want {
		if verdicts[k] != v {
			t.Errorf("%s: %s, want %s", k, verdicts[k], v)
		}
	}
	if _, ok := verdicts["64/throughput_toks_per_s"]; ok {
		t.Error("concurrency 64 (new) was compared")
	}
	if d.Verdict != Red || d.Red != 9 {
		t.Errorf("verdict %s with %d red rows, want RED with 9 (1 + 8 missing)", d.Verdict, d.Red)
	}
	// c1 and c16 compared × 7 metrics that can carry an interval; neither snapshot has any.
	if len(d.Notes) != 2 || !strings.Contains(d.Notes[0], "concurrency 64 is new") ||
		!strings.HasPrefix(d.Notes[1], "14 of 14 per-concurrency rows judged on tolerance only: no 95 % interval in the baseline for 14, in the current run for 14") {
		t.Errorf("notes %q", d.Notes)
	}
	// c1, c16, c32 × 8 metrics = 24 rows, + prefix, KV usage, 2 kernel classes, spinpoll = 29.
	if len(d.Rows) != 29 {
		t.Errorf("%d rows, want 29 (3 concurrencies × 8 + 5 sweep-wide)", len(d.Rows))
	}
}

func rowKey(r schema.DiffRow) string {
	return strconv.Itoa(r.Concurrency) + "/" + r.Metric
}

func TestDiffGreenWhenAllWithin(t *testing.T) {
	base := doc(map[string]schema.PerfBenchPoint{"16": point(1000, 80, 0)})
	cur := doc(map[string]schema.PerfBenchPoint{"16": point(1010, 79, 0)})
	d, err := Diff(base, cur, nil)
	if err != nil {
		t.Fatal(err)
	}
	// 8 point rows GREEN; 2 server rows + 1 kernel row + spinpoll are null on both sides.
	if d.Verdict != Green || d.Green != 8 || d.Null != 4 || d.Red != 0 {
		t.Errorf("verdict %s green %d null %d red %d, want GREEN 8 4 0", d.Verdict, d.Green, d.Null, d.Red)
	}
}

func TestDiffRefusesDifferentWorkloads(t *testing.T) {
	base := doc(map[string]schema.PerfBenchPoint{"16": point(1000, 80, 0)})
	cur := doc(map[string]schema.PerfBenchPoint{"16": point(1000, 80, 0)})
	cur.Workload.InputTokenBand = "10k"
	_, err := Diff(base, cur, nil)
	if err == nil || !strings.Contains(err.Error(), `input_token_band "1k" vs "10k"`) {
		t.Fatalf("err = %v, want the band mismatch named", err)
	}
	cur = doc(map[string]schema.PerfBenchPoint{"16": point(1000, 80, 0)})
	if _, err := Diff(base, cur, Tolerances{"ttft": 3}); err == nil || !strings.Contains(err.Error(), "tolerances.ttft: unknown metric") {
		t.Fatalf("err = %v, want the unknown tolerance named", err)
	}
}

func TestParseTolerance(t *testing.T) {
	cases := []struct {
		in     string
		metric string
		value  float64
		err    string
	}{
		{"ttft_p50_ms=8", "ttft_p50_ms", 8, ""},
		{"ttft_p50_ms=8%", "ttft_p50_ms", 8, ""},
		{" throughput_toks_per_s = 2.5 ", "throughput_toks_per_s", 2.5, ""},
		{"prefix_cache_hit_rate_post=3pts", "prefix_cache_hit_rate_post", 3, ""},
		{"gpu_cache_usage_perc_peak=4pp", "gpu_cache_usage_perc_peak", 4, ""},
		{"kernel_class_gpu_pct.tp_all_reduce=2", "kernel_class_gpu_pct.tp_all_reduce", 2, ""},
		{"kernel_class_gpu_pct=4", "kernel_class_gpu_pct", 4, ""},
		{"prefix_cache_hit_rate_post=3%", "", 0, "measured in pts, not %"},
		{"ttft_p50_ms=2pts", "", 0, "measured in %, not pts"},
		{"ttft=5", "", 0, `unknown metric "ttft"`},
		{"ttft_p50_ms", "", 0, "want METRIC=VALUE"},
		{"ttft_p50_ms=-1", "", 0, "not a non-negative number"},
		{"ttft_p50_ms=abc", "", 0, "not a non-negative number"},
		{"ttft_p50_ms=1000000", "ttft_p50_ms", 1000000, ""},
		{"ttft_p50_ms=1000001", "", 0, "must be between 0 and 1000000 (as schedule.tolerances in a campaign file)"},
	}
	for _, tc := range cases {
		m, v, err := ParseTolerance(tc.in)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want %q", tc.in, err, tc.err)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.in, err)
		case m != tc.metric || v != tc.value:
			t.Errorf("%q: %s=%v, want %s=%v", tc.in, m, v, tc.metric, tc.value)
		}
	}
}

// Goodput and SLO attainment are compared like the other metrics, with their intervals: a
// drop in attainment beyond 1 point whose interval lies wholly beyond it is RED (a regression,
// lower is worse), one within noise is NOTE; cells without an slo get no such rows, and two
// runs under different per-request targets are not compared on them (a note says why).
func TestDiffGoodput(t *testing.T) {
	slo := func(tpot float64) *schema.SLO { return &schema.SLO{TPOTMs: f(tpot)} }
	doc := func(s *schema.SLO, goodput, att float64, ivs schema.Intervals) *schema.PerfBench {
		p := point(1000, 80, 0)
		if s != nil {
			p.GoodputReqS, p.SLOAttainmentPct = f(goodput), f(att)
		}
		p.Intervals = ivs
		d := doc(map[string]schema.PerfBenchPoint{"8": p})
		d.SLO = s
		return d
	}
	rowsOf := func(d *schema.BaselineDiff) map[string]schema.DiffRow {
		out := map[string]schema.DiffRow{}
		for _, r := range d.Rows {
			out[r.Metric] = r
		}
		return out
	}
	tight := schema.Intervals{"goodput_req_s": *iv(9.9, 10.1), "slo_attainment_pct": *iv(99.3, 99.7)}
	drop := schema.Intervals{"goodput_req_s": *iv(9.3, 9.5), "slo_attainment_pct": *iv(97.8, 98.2)}
	d, err := Diff(doc(slo(50), 10, 99.5, tight), doc(slo(50), 9.4, 98, drop), nil)
	if err != nil {
		t.Fatal(err)
	}
	rows := rowsOf(d)
	att, gp := rows["slo_attainment_pct"], rows["goodput_req_s"]
	// attainment −1.5 pts ± 1.4 × √(0.2² + 0.2²): wholly below −1 → RED; goodput −6 % → RED
	if att.Verdict != Red || !strings.HasPrefix(att.Note, "beyond noise") || att.Unit != UnitPoints || att.Direction != LowerIsWorse || *att.Delta != -1.5 {
		t.Errorf("attainment row %+v", att)
	}
	if gp.Verdict != Red || *gp.DeltaPct > -5.9 || gp.Change == nil || d.Verdict != Red {
		t.Errorf("goodput row %+v, diff %s", gp, d.Verdict)
	}
	wide := schema.Intervals{"goodput_req_s": *iv(9, 10), "slo_attainment_pct": *iv(96, 100)}
	d, _ = Diff(doc(slo(50), 10, 99.5, tight), doc(slo(50), 9.9, 98, wide), nil)
	if r := rowsOf(d)["slo_attainment_pct"]; r.Verdict != WithinNoise {
		t.Errorf("attainment −1.5 ± 2: %s (%s), want NOTE", r.Verdict, r.Note)
	}
	d, _ = Diff(doc(slo(50), 10, 99.5, tight), doc(slo(50), 10, 100, tight), nil)
	if r := rowsOf(d)["slo_attainment_pct"]; r.Verdict != Green || d.Verdict != Green {
		t.Errorf("attainment up: %s, diff %s", r.Verdict, d.Verdict)
	}
	d, _ = Diff(doc(nil, 0, 0, nil), doc(nil, 0, 0, nil), nil)
	if _, ok := rowsOf(d)["goodput_req_s"]; ok {
		t.Error("cells without an slo got a goodput row")
	}
	d, _ = Diff(doc(slo(50), 10, 99.5, tight), doc(slo(40), 5, 60, drop), nil)
	r := rowsOf(d)["slo_attainment_pct"]
	if r.Verdict != NullLegacy || !strings.Contains(r.Note, "per-request SLOs differ (baseline TPOT <= 50 ms, current TPOT <= 40 ms)") || d.Verdict != Green ||
		*r.Current != 60 || len(d.Notes) == 0 {
		t.Errorf("different SLOs: row %+v, verdict %s, notes %q", r, d.Verdict, d.Notes)
	}
	d, _ = Diff(doc(nil, 0, 0, nil), doc(slo(50), 10, 99.5, tight), nil)
	if r := rowsOf(d)["goodput_req_s"]; r.Verdict != NullLegacy {
		t.Errorf("a baseline without an slo: %s, want NULL_LEGACY_BASELINE", r.Verdict)
	}
}
