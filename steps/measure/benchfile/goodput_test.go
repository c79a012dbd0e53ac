package benchfile

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
)

// sloOpts judges the 8 synthetic requests (TTFT, latency in ms; 16 tokens: TPOT = (latency −
// TTFT) / 15) by TTFT ≤ 50, TPOT ≤ 11, latency ≤ 220:
//
//	TTFT  56.334 66.96  64.171 70.531 38.698 32.521 35.382 37.732   4 miss (the first four)
//	lat  212.849 231.517 227.374 236.51 206.777 196.091 199.102 200.723   3 miss (2nd–4th)
//	TPOT  10.434 10.970 10.880 11.065 11.205 10.905 10.915 10.866   2 miss (4th, 5th)
//
// good: the last three. Attainment 3/8, goodput 3 / 0.437933 s.
func sloOpts() (schema.SLO, Expect) {
	v := func(x float64) *float64 { return &x }
	return schema.SLO{TTFTMs: v(50), TPOTMs: v(11), LatencyMs: v(220)}, Expect{Model: model, Concurrency: 4, ISL: 550}
}

// An import with per-request times (vLLM --save-detailed, AIPerf's records) judges each request
// as a measured point does; one with aggregates only says its goodput is unknown (no
// attainment, no goodput: not zero); the tool's own goodput, when the file states one, is kept
// beside it.
func TestImportGoodput(t *testing.T) {
	slo, e := sloOpts()
	o := opts
	o.SLO = &slo
	want := schema.Goodput{SLO: slo, Requests: 8, Good: 3, MissedTTFT: 4, MissedTPOT: 2, MissedLatency: 3}
	check := func(name string, r *Result) {
		t.Helper()
		g := r.Point.Goodput
		if g == nil || g.Good != want.Good || g.Requests != want.Requests || g.MissedTTFT != want.MissedTTFT ||
			g.MissedTPOT != want.MissedTPOT || g.MissedLatency != want.MissedLatency || g.Unknown != "" {
			t.Fatalf("%s: goodput %+v, want %+v", name, g, want)
		}
		near(t, name+" attainment", *r.Point.SLOAttainment, 3.0/8)
		near(t, name+" goodput", *r.Point.GoodputReqS, 3/0.437933)
	}
	r, err := ReadVLLM("testdata/vllm-result-c4.json", e, o)
	if err != nil {
		t.Fatal(err)
	}
	check("vllm", r)
	r, err = ReadAIPerf("testdata/aiperf", Expect{Model: model, Concurrency: 4, ISL: 550, OSL: 16}, o)
	if err != nil {
		t.Fatal(err)
	}
	check("aiperf", r)
	if r.Point.Goodput.SourceGoodputReqS != nil {
		t.Error("a file without the tool's goodput got one")
	}

	// aggregates only, with vLLM's own --goodput figure
	dir := t.TempDir()
	f := filepath.Join(dir, "r.json")
	writeFile(t, f, strings.Replace(withoutDetails(read(t, "testdata/vllm-result-c4.json")), `"request_goodput": null`, `"request_goodput": 6.8`, 1))
	r, err = ReadVLLM(f, Expect{}, o)
	if err != nil {
		t.Fatal(err)
	}
	g := r.Point.Goodput
	if r.StatsFrom != StatsAggregate || g == nil || g.Unknown != NoPerRequestGoodput || r.Point.SLOAttainment != nil || r.Point.GoodputReqS != nil ||
		g.SourceGoodputReqS == nil || *g.SourceGoodputReqS != 6.8 {
		t.Errorf("vllm aggregate: goodput %+v attainment %v goodput_req_s %v", g, r.Point.SLOAttainment, r.Point.GoodputReqS)
	}
	r, err = ReadSGLang("testdata/sglang-bench_serving.jsonl", Expect{Concurrency: 4, ISL: 550, OSL: 16}, o)
	if err != nil {
		t.Fatal(err)
	}
	if g := r.Point.Goodput; g == nil || g.Unknown == "" || r.Point.SLOAttainment != nil {
		t.Errorf("sglang aggregate: goodput %+v", g)
	}

	// AIPerf's own goodput metric, beside a recomputed one
	copyFile(t, "testdata/aiperf/"+AIPerfRecords, filepath.Join(dir, AIPerfRecords))
	writeFile(t, filepath.Join(dir, AIPerfAggregate), strings.Replace(read(t, "testdata/aiperf/"+AIPerfAggregate), "{\n",
		"{\n  \"goodput\": {\"unit\": \"requests/sec\", \"avg\": 6.85},\n", 1))
	r, err = ReadAIPerf(dir, Expect{Model: model, Concurrency: 4, ISL: 550, OSL: 16}, o)
	if err != nil {
		t.Fatal(err)
	}
	check("aiperf with its own goodput", r)
	if s := r.Point.Goodput.SourceGoodputReqS; s == nil || *s != 6.85 {
		t.Errorf("aiperf's own goodput %v, want 6.85", s)
	}

	// no slo: nothing about goodput, whatever the file says
	r, err = ReadVLLM(f, Expect{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if r.Point.Goodput != nil || r.Point.SLOAttainment != nil {
		t.Errorf("no slo: goodput %+v", r.Point.Goodput)
	}
}
