package schema

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// SchemaSweep names cells/<id>/sweep_probes.json.
const SchemaSweep = "sweep_v1"

// Sweep modes: a cell's points are chosen at run time, by an SLO search or by walking its
// concurrency list until stop_when holds.
const (
	SweepSearch = "search"
	SweepList   = "list"
)

// Search asks for the highest concurrency of a cell that still meets an SLO, found by
// bisection over the integers of [from, to] instead of a full sweep.
type Search struct {
	Over       string `yaml:"over,omitempty" json:"over,omitempty" enum:"concurrency" doc:"what is searched: concurrency (the default; rate is not searched yet)"`
	SLO        string `yaml:"slo" json:"slo" doc:"expr rule on a point's metrics (run-shape's fields, e.g. itl_avg_ms <= 50 && error_count == 0) that a point must meet"`
	From       int    `yaml:"from" json:"from" range:"1,100000" doc:"lowest concurrency searched"`
	To         int    `yaml:"to" json:"to" range:"1,100000" doc:"highest concurrency searched"`
	Resolution int    `yaml:"resolution,omitempty" json:"resolution,omitempty" range:"0,100000" doc:"stop when the knee is known to within this many (default 1: the exact knee)"`
}

// Step is the search's resolution, 1 when unset.
func (s *Search) Step() int {
	if s == nil || s.Resolution < 1 {
		return 1
	}
	return s.Resolution
}

// Expands reports whether the cell's points are decided at run time (a search, a stop_when
// sweep or sweep: auto) rather than compiled from its lists of points.
func (c *Cell) Expands() bool {
	return c != nil && c.Import == nil && (c.Search != nil || c.StopWhen != "" || !c.Sweep.IsZero())
}

// FirstConcurrency is the concurrency a cell starts at: its first listed one, else its
// search's lower bound, else 1.
func (c *Cell) FirstConcurrency() int {
	switch {
	case len(c.Concurrencies) > 0:
		return c.Concurrencies[0]
	case c.Search != nil && c.Search.From > 0:
		return c.Search.From
	}
	return 1
}

// SweepProbe is one point a sweep measured (or reused) and what the rule said of it.
type SweepProbe struct {
	Concurrency int  `json:"concurrency"`   // the probe's concurrency (a rate probe's in-flight cap)
	Load        Load `json:"load,omitzero"` // a rate probe's key; absent on a concurrency probe (PointLoad)
	// Met says the SLO held on the point's estimates (search), or the point is kept (list). A
	// probe with a Verdict is decided by it; Met is then only the undecided probe's best guess.
	Met    bool   `json:"met"`
	Status string `json:"status"`           // the point's status: ok, partial, failed
	Values string `json:"values,omitempty"` // what the rule read, e.g. "itl_avg_ms = 41.2"
	// Verdict is the probe's decided SLO verdict (meets, misses, undecided) when its point
	// measured until the SLO was decided (Point.Decision); an undecided probe is evidence of
	// neither side, so the knee is a band (SweepResult.KneeLo, KneeHi).
	Verdict string `json:"verdict,omitempty"`
	// NoEvidence marks a search's probe with no valid request (or no point): it says nothing
	// about the SLO, so the search stopped there with its knee unknown.
	NoEvidence bool `json:"no_evidence,omitempty"`
	// MeasurementCost is what measuring the probe's point took (Point.MeasurementCost); a
	// reused probe keeps the cost it was measured at.
	MeasurementCost *MeasurementCost `json:"measurement_cost,omitempty"`
	Throughput      *float64         `json:"output_tok_s,omitempty"`
	RequestRate     *float64         `json:"request_throughput,omitempty"`
	// GoodputReqS and SLOAttainment judge the probe's requests against the cell's slo;
	// absent when it declares none.
	GoodputReqS   *float64 `json:"goodput_req_s,omitempty"`
	SLOAttainment *float64 `json:"slo_attainment,omitempty"`
}

// PointLoad is the probe's point: its load, or the concurrency point.
func (p SweepProbe) PointLoad() Load { return LoadOf(p.Load, p.Concurrency, 0) }

// SweepResult is sweep_probes.json: the probes of one cell's run-time sweep and its answer.
type SweepResult struct {
	Schema string       `json:"schema"` // sweep_v1
	Cell   string       `json:"cell"`
	Mode   string       `json:"mode"`          // search, list or auto
	SLO    string       `json:"slo,omitempty"` // the search's rule
	From   int          `json:"from,omitempty"`
	To     int          `json:"to,omitempty"`
	Bound  int          `json:"bound"` // most probes the sweep could make
	Probes []SweepProbe `json:"probes"`
	// Knee is the highest concurrency that met the SLO (search), 0 when even the lowest failed.
	// With undecided probes it is the best estimate inside the band [KneeLo, KneeHi].
	Knee int `json:"knee"`
	// KneeLo and KneeHi are the band the knee lies in (docs/search.md): KneeLo the highest
	// concurrency decided to meet the SLO below the lowest decided to miss it (0: none is, the
	// knee may be "no concurrency"), KneeHi one below that lowest miss (To when no probe is
	// decided to miss: the knee may lie beyond). Both equal Knee when every probe is decided.
	// A file written before bands has neither: KneeBand reads it as [Knee, Knee].
	KneeLo int `json:"knee_lo"`
	KneeHi int `json:"knee_hi"`
	// BandLevel is the confidence each end of the band is decided at (0.95), 0 when the probes
	// were judged on their estimates (fixed request counts): the band is then exact by
	// construction and carries no stated confidence.
	BandLevel float64 `json:"band_level,omitempty"`
	// KneeAtTop says the upper bound itself met the SLO: the real knee may lie beyond it.
	KneeAtTop bool `json:"knee_at_top,omitempty"`
	// KneeUnknown says why the search stopped without an answer: a probe had no valid request
	// (or no point), which says nothing about the SLO. Knee is then 0 and means unknown, not none.
	KneeUnknown string `json:"knee_unknown,omitempty"`
	// KneeOutputTokS and KneeRequestThroughput are the knee point's throughput: output
	// tokens/s and requests/s of every valid request, met SLO or not. sweep_probes.json files
	// written before they were renamed call them goodput_tok_s and goodput_req_s; those are
	// still read (UnmarshalJSON), since goodput now means what the field means by it.
	KneeOutputTokS        *float64 `json:"knee_output_tok_s,omitempty"`
	KneeRequestThroughput *float64 `json:"knee_request_throughput,omitempty"`
	// KneeGoodputReqS and KneeSLOAttainment are the knee point's goodput and SLO attainment
	// under the cell's per-request slo (Point.GoodputReqS, Point.SLOAttainment); absent when
	// the cell declares none.
	KneeGoodputReqS   *float64 `json:"knee_goodput_req_s,omitempty"`
	KneeSLOAttainment *float64 `json:"knee_slo_attainment,omitempty"`
	// MeasurementCost is what the sweep's points took, summed (the cell's cost).
	MeasurementCost *CostTotal `json:"measurement_cost,omitempty"`
	// FixedSweep estimates what a fixed sweep of every concurrency of the search's range (at
	// its resolution) would have cost at the per-point cost the probes measured (search only).
	FixedSweep *FixedSweepCost `json:"fixed_sweep_cost,omitempty"`
	StopWhen   string          `json:"stop_when,omitempty"` // the list sweep's rule
	Skipped    []Load          `json:"skipped,omitempty"`   // listed points not measured (bare concurrencies in files written before points were keyed by load)
	StopReason string          `json:"stop_reason,omitempty"`
	// Auto is what sweep: auto found (mode auto): its anchors and the rates between them.
	Auto *AutoSweepResult `json:"auto,omitempty"`
}

// UnmarshalJSON reads sweep_probes.json, taking the knee's throughput from the keys files
// written before the rename used (goodput_tok_s, goodput_req_s) when the new ones are absent.
func (r *SweepResult) UnmarshalJSON(b []byte) error {
	type plain SweepResult
	var v struct {
		plain
		LegacyTokS *float64 `json:"goodput_tok_s"`
		LegacyReqS *float64 `json:"goodput_req_s"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*r = SweepResult(v.plain)
	if r.KneeOutputTokS == nil {
		r.KneeOutputTokS = v.LegacyTokS
	}
	if r.KneeRequestThroughput == nil {
		r.KneeRequestThroughput = v.LegacyReqS
	}
	return nil
}

// KneeBand is the search's band [lo, hi]; a file written before bands reads as [Knee, Knee].
func (r *SweepResult) KneeBand() (lo, hi int) {
	if r.KneeHi == 0 && r.KneeLo == 0 {
		return r.Knee, r.Knee
	}
	return r.KneeLo, r.KneeHi
}

// Undecided lists the concurrencies whose probes measured to their max without a verdict.
func (r *SweepResult) Undecided() []int {
	var out []int
	for _, p := range r.Probes {
		if p.Verdict == VerdictUndecided {
			out = append(out, p.Concurrency)
		}
	}
	slices.Sort(out)
	return out
}

// BandText writes the knee with its band as a reader sees it: "c31" when exact, "c31 (c30–c32
// at 95 %)" when probes near the threshold were undecided, "≥ c64" at the top, "none" when no
// concurrency meets, "unknown" when a probe had no evidence.
func (r *SweepResult) BandText() string {
	if r.KneeUnknown != "" {
		return "unknown"
	}
	lo, hi := r.KneeBand()
	open := hi == r.To && r.To > 0 && !r.decidedMiss() // no probe decided to miss: it may lie beyond To
	knee := "none"
	switch {
	case r.Knee > 0 && r.KneeAtTop:
		knee = fmt.Sprintf("≥ c%d", r.Knee)
	case r.Knee > 0:
		knee = fmt.Sprintf("c%d", r.Knee)
	}
	if lo == hi {
		return knee
	}
	end := func(c int) string {
		if c == 0 {
			return "none"
		}
		return fmt.Sprintf("c%d", c)
	}
	band := end(lo) + "–" + end(hi)
	if open {
		band += " or beyond"
	}
	if r.BandLevel > 0 {
		band += fmt.Sprintf(" at %s %%", strconv.FormatFloat(math.Round(1000*r.BandLevel)/10, 'f', -1, 64))
	}
	return knee + " (" + band + ")"
}

// decidedMiss reports whether some probe was decided to miss the SLO (a verdict of misses, or
// a miss on its estimate for a probe without a decision).
func (r *SweepResult) decidedMiss() bool {
	for _, p := range r.Probes {
		if p.NoEvidence {
			continue
		}
		if p.Verdict == VerdictMisses || (p.Verdict == "" && !p.Met) {
			return true
		}
	}
	return false
}
