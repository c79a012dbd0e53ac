package schema

import (
	"fmt"
	"strconv"
	"strings"
)

// SLO is a cell's per-request service-level objective (slo:): the targets every request is
// judged by, so a point can state its goodput and SLO attainment as DistServe, vLLM's
// --goodput, AIPerf and GuideLLM define them (docs/measurement.md, "Goodput"). A target left
// out is not judged; at least one is set.
type SLO struct {
	TTFTMs    *float64 `yaml:"ttft_ms,omitempty" json:"ttft_ms,omitempty" range:"0,86400000" doc:"a request's time to first token (first content or reasoning) must be at most this many ms (above 0)"`
	TPOTMs    *float64 `yaml:"tpot_ms,omitempty" json:"tpot_ms,omitempty" range:"0,86400000" doc:"a request's time per output token, (latency − TTFT) / (output tokens − 1), must be at most this many ms (above 0); a request of one token has none and is not judged by it"`
	LatencyMs *float64 `yaml:"latency_ms,omitempty" json:"latency_ms,omitempty" range:"0,86400000" doc:"a request's end-to-end latency (start to last content) must be at most this many ms (above 0)"`
}

// SLO target keys as the campaign file writes them.
const (
	SLOTTFT    = "ttft_ms"
	SLOTPOT    = "tpot_ms"
	SLOLatency = "latency_ms"
)

// Targets lists the set targets in file order (key, ms).
func (s SLO) Targets() []SLOTarget {
	var out []SLOTarget
	for _, t := range []struct {
		key string
		v   *float64
	}{{SLOTTFT, s.TTFTMs}, {SLOTPOT, s.TPOTMs}, {SLOLatency, s.LatencyMs}} {
		if t.v != nil {
			out = append(out, SLOTarget{Key: t.key, Ms: *t.v})
		}
	}
	return out
}

// SLOTarget is one set target of an SLO.
type SLOTarget struct {
	Key string  // ttft_ms, tpot_ms or latency_ms
	Ms  float64 // the most a request may take
}

// Problems are what is wrong with a declared SLO, by key ("" for the slo mapping itself), for
// validate to place at that key: a target must be above zero, and an SLO sets at least one.
func (s SLO) Problems() map[string]string {
	out := map[string]string{}
	for _, t := range []struct {
		key string
		v   *float64
	}{{SLOTTFT, s.TTFTMs}, {SLOTPOT, s.TPOTMs}, {SLOLatency, s.LatencyMs}} {
		if t.v != nil && !(*t.v > 0) {
			out[t.key] = fmt.Sprintf("slo %s = %v: a target is a positive number of milliseconds (no request takes 0 ms)", t.key, *t.v)
		}
	}
	if len(s.Targets()) == 0 {
		out[""] = "slo sets no target: give at least one of ttft_ms, tpot_ms, latency_ms"
	}
	return out
}

// String writes the targets compactly, as the report prints them: "TTFT <= 2000 ms, TPOT <= 50 ms".
func (s SLO) String() string {
	names := map[string]string{SLOTTFT: "TTFT", SLOTPOT: "TPOT", SLOLatency: "latency"}
	var parts []string
	for _, t := range s.Targets() {
		parts = append(parts, names[t.Key]+" <= "+strconv.FormatFloat(t.Ms, 'f', -1, 64)+" ms")
	}
	return strings.Join(parts, ", ")
}

// TweakSchema makes the generated JSON Schema say what Problems says: each target above
// zero, at least one target.
func (SLO) TweakSchema(s map[string]any) {
	s["minProperties"] = 1
	for _, p := range s["properties"].(map[string]any) {
		prop := p.(map[string]any)
		delete(prop, "minimum")
		prop["exclusiveMinimum"] = 0
	}
}

// Goodput is how a point's requests fared against its cell's SLO (Point.Goodput): the counts
// its slo_attainment and goodput_req_s are made from, and which target each miss missed.
type Goodput struct {
	SLO SLO `json:"slo"` // the targets judged
	// Requests is the denominator of slo_attainment: every request of the measured window,
	// valid or failed (warm-up and other phases excluded), as AIPerf's good_request_fraction.
	Requests int `json:"requests"`
	Good     int `json:"good"`   // valid requests meeting every target
	Failed   int `json:"failed"` // failed requests: none meets an SLO
	// Valid requests that missed each target (a request can miss several).
	MissedTTFT    int `json:"missed_ttft,omitempty"`
	MissedTPOT    int `json:"missed_tpot,omitempty"`
	MissedLatency int `json:"missed_latency,omitempty"`
	// NoTPOT counts valid requests of fewer than two output tokens: they have no TPOT, so a
	// tpot_ms target does not judge them (vLLM's --goodput counts their TPOT as 0).
	NoTPOT int `json:"no_tpot,omitempty"`
	// Unknown says why the counts are unknown (an imported aggregate without per-request
	// times); the counts are then 0 and the point has no slo_attainment or goodput_req_s.
	Unknown string `json:"unknown,omitempty"`
	// SourceGoodputReqS is the imported tool's own goodput (vLLM's request_goodput, AIPerf's
	// goodput), as its file states it under the SLO it was run with; shown beside perfdag's.
	SourceGoodputReqS *float64 `json:"source_goodput_req_s,omitempty"`
}
