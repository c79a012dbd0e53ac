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

// Search asks for the highest load of a cell that still meets an SLO, found by bisection
// instead of a full sweep: over the integers of [from, to] (concurrency), or over a grid of
// request rates from from to to spaced by a relative resolution (rate: RateGrid).
type Search struct {
	Over       string     `yaml:"over,omitempty" json:"over,omitempty" enum:"concurrency,rate" doc:"what is searched: concurrency (the default: closed-loop points c<from>..c<to>) or rate (open-loop points r<rate>, or r<rate>-cap<max_in_flight> with the cell's cap)"`
	SLO        string     `yaml:"slo" json:"slo" doc:"expr rule on a point's metrics (run-shape's fields, e.g. itl_avg_ms <= 50 && error_count == 0) that a point must meet"`
	From       float64    `yaml:"from" json:"from" range:"0,100000" doc:"lowest load searched: a concurrency (a whole number, at least 1), or a request rate in requests per second (over: rate)"`
	To         float64    `yaml:"to" json:"to" range:"0,100000" doc:"highest load searched, as from"`
	Resolution Resolution `yaml:"resolution,omitempty" json:"resolution,omitzero" doc:"stop when the knee is known to within this: a whole number of concurrencies (default 1: the exact knee), or for over: rate a percentage of the rate written with its sign, e.g. 2% (the default)"`
}

// Step is the concurrency search's resolution, 1 when unset.
func (s *Search) Step() int {
	if s == nil || s.Resolution.N < 1 {
		return 1
	}
	return s.Resolution.N
}

// OverRate reports whether the search is over request rate.
func (s *Search) OverRate() bool { return s != nil && s.Over == SearchOverRate }

// Conc is a concurrency search's bounds as whole concurrencies (a rate search's truncated:
// callers ask OverRate first).
func (s *Search) Conc() (from, to int) { return int(s.From), int(s.To) }

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
	case c.Search != nil && !c.Search.OverRate() && c.Search.From >= 1:
		return int(c.Search.From)
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
	// RateShort marks an open-loop probe whose sends fell more than 5 % below its schedule
	// (its point's rate_met false): the search counted it as a decided miss whatever its
	// latencies (Met false; Verdict misses when its point decided, whatever it decided), and
	// Values says so. AchievedRate is the rate it sent at.
	RateShort    bool     `json:"rate_short,omitempty"`
	AchievedRate *float64 `json:"achieved_rate,omitempty"`
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
	Schema string `json:"schema"` // sweep_v1
	Cell   string `json:"cell"`
	Mode   string `json:"mode"`          // search, list or auto
	SLO    string `json:"slo,omitempty"` // the search's rule
	From   int    `json:"from,omitempty"`
	To     int    `json:"to,omitempty"`
	// Over is "rate" for a search over request rate (absent: concurrency). Its bounds are then
	// FromRate and ToRate, its grid's step ResolutionPct, its probes capped by MaxInFlight (0:
	// none), and its answer KneeRate in [KneeRateLo, KneeRateHi]; From, To, Knee, KneeLo and
	// KneeHi are 0 (docs/search.md).
	Over          string       `json:"over,omitempty"`
	FromRate      float64      `json:"from_rate,omitempty"`
	ToRate        float64      `json:"to_rate,omitempty"`
	ResolutionPct float64      `json:"resolution_pct,omitempty"`
	MaxInFlight   int          `json:"max_in_flight,omitempty"`
	KneeRate      float64      `json:"knee_rate,omitempty"`
	KneeRateLo    float64      `json:"knee_rate_lo,omitempty"`
	KneeRateHi    float64      `json:"knee_rate_hi,omitempty"`
	Bound         int          `json:"bound"` // most probes the sweep could make
	Probes        []SweepProbe `json:"probes"`
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
	if r.Over == SearchOverRate {
		return r.rateBandText()
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
