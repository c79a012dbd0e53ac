package schema

import (
	"encoding/json"
	"testing"
)

// sweep_probes.json written before the knee's throughput was renamed says goodput_tok_s and
// goodput_req_s: they are read as the knee's throughput (they never were goodput), and a file
// with the new keys keeps them.
func TestSweepResultReadsOldKneeKeys(t *testing.T) {
	var old SweepResult
	if err := json.Unmarshal([]byte(`{"schema":"sweep_v1","cell":"a","mode":"search","knee":8,"goodput_tok_s":690.7,"goodput_req_s":0.69,"probes":[]}`), &old); err != nil {
		t.Fatal(err)
	}
	if old.KneeOutputTokS == nil || *old.KneeOutputTokS != 690.7 || old.KneeRequestThroughput == nil || *old.KneeRequestThroughput != 0.69 || old.Knee != 8 || old.KneeGoodputReqS != nil {
		t.Errorf("old file read as %+v", old)
	}
	b, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	var again map[string]any
	if err := json.Unmarshal(b, &again); err != nil {
		t.Fatal(err)
	}
	if _, ok := again["goodput_tok_s"]; ok || again["knee_output_tok_s"] != 690.7 || again["knee_request_throughput"] != 0.69 {
		t.Errorf("written back as %s", b)
	}
	var now SweepResult
	if err := json.Unmarshal(b, &now); err != nil || *now.KneeOutputTokS != 690.7 {
		t.Errorf("new file read as %+v (%v)", now, err)
	}
}

func TestSLOTargets(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	s := SLO{TTFTMs: v(2000), LatencyMs: v(30000)}
	if got := s.String(); got != "TTFT <= 2000 ms, latency <= 30000 ms" {
		t.Errorf("String = %q", got)
	}
	if p := s.Problems(); len(p) != 0 {
		t.Errorf("problems of a valid slo: %v", p)
	}
	if p := (SLO{TPOTMs: v(-1)}).Problems(); len(p) != 1 || p[SLOTPOT] == "" {
		t.Errorf("problems of tpot -1: %v", p)
	}
	if p := (SLO{}).Problems(); len(p) != 1 || p[""] == "" {
		t.Errorf("problems of an empty slo: %v", p)
	}
}
