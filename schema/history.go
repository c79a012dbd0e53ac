package schema

import (
	"slices"
	"strings"
)

// SchemaHistoryRow names the history_v1 lake row: one judged scheduled run.
const SchemaHistoryRow = "history_v1"

// HistoryRow is what a scheduled run's campaign directory says about the run beyond its atlas:
// when it ran and why, its verdict against its baseline, and the knee of each searched cell. It
// is made from verdict.json and the cells' sweep_probes.json alone (NewHistoryRow), so a
// campaign's history reads the same from its directories and from a lake it was published to.
type HistoryRow struct {
	Schema         string `json:"schema"` // history_v1
	Campaign       string `json:"campaign"`
	Slot           string `json:"slot"`    // RFC 3339 in the schedule's zone; a manual fire's is its fire time
	Trigger        string `json:"trigger"` // scheduled, catch-up, queued, manual
	Started        string `json:"started"` // RFC 3339 UTC
	Ended          string `json:"ended"`
	Outcome        string `json:"outcome"` // succeeded, failed, interrupted
	Verdict        string `json:"verdict"` // GREEN, RED, FAILED, ERROR, INTERRUPTED, NO_BASELINE, NOT_COMPARED
	Baseline       string `json:"baseline,omitempty"`
	BaselineSHA256 string `json:"baseline_sha256,omitempty"`
	RedRows        int    `json:"red_rows"`
	NoiseRows      int    `json:"within_noise_rows"`
	DriftChanges   int    `json:"drift_changes,omitempty"` // change points that made it RED (schedule.tolerances.drift)
	Error          string `json:"error,omitempty"`
	OnRed          string `json:"on_red,omitempty"`
	Dir            string `json:"dir,omitempty"`             // the campaign directory, where it ran (or was published from)
	PerfdagVersion string `json:"perfdag_version,omitempty"` // the perfdag that measured it (run.json)
	Host           string `json:"host,omitempty"`            // the machine it ran on (run.json)
	// Endpoints are what the run measured: each endpoint's model and what its server said of
	// itself (version, build), as run.json (and SOURCE.md) record them.
	Endpoints []HistoryEndpoint `json:"endpoints,omitempty"`
	Knees     []Knee            `json:"knees,omitempty"` // searched cells, by cell id
}

// HistoryEndpoint is one endpoint a run measured.
type HistoryEndpoint struct {
	Name   string `json:"name"`
	Model  string `json:"model,omitempty"`
	Server string `json:"server,omitempty"` // what the server reported of itself (version, build)
}

// Knee is a searched cell's answer in one run: the knee and the band it lies in.
type Knee struct {
	Cell    string `json:"cell"`
	SLO     string `json:"slo"`
	Knee    int    `json:"knee"`
	KneeLo  int    `json:"knee_lo"`
	KneeHi  int    `json:"knee_hi"`
	AtTop   bool   `json:"knee_at_top,omitempty"`
	Unknown string `json:"knee_unknown,omitempty"`
	// Over is "rate" for a search over request rate: its knee is KneeRate requests/s in
	// [KneeRateLo, KneeRateHi] and Knee, KneeLo, KneeHi are 0.
	Over       string  `json:"over,omitempty"`
	KneeRate   float64 `json:"knee_rate,omitempty"`
	KneeRateLo float64 `json:"knee_rate_lo,omitempty"`
	KneeRateHi float64 `json:"knee_rate_hi,omitempty"`
}

// NewHistoryRow makes the history row of a judged run from its verdict, its directory and the
// sweeps of its cells (only SLO searches count; a stopped list has no knee).
func NewHistoryRow(v *Verdict, dir string, sweeps []SweepResult) HistoryRow {
	h := HistoryRow{Schema: SchemaHistoryRow, Campaign: v.Campaign, Slot: v.Slot, Trigger: v.Trigger,
		Started: v.Started, Ended: v.Ended, Outcome: v.Outcome, Verdict: v.Verdict, Error: v.Error, OnRed: v.OnRed, Dir: dir}
	h.DriftChanges = len(v.Drift)
	if d := v.Diff; d != nil {
		h.Baseline, h.BaselineSHA256, h.RedRows, h.NoiseRows = d.Baseline, d.BaselineSHA256, d.Red, d.WithinNoise
	}
	for _, s := range sweeps {
		if s.Mode != SweepSearch {
			continue
		}
		lo, hi := s.KneeBand()
		k := Knee{Cell: s.Cell, SLO: s.SLO, Knee: s.Knee, KneeLo: lo, KneeHi: hi, AtTop: s.KneeAtTop, Unknown: s.KneeUnknown}
		if s.Over == SearchOverRate {
			k.Over, k.KneeRate, k.KneeRateLo, k.KneeRateHi = s.Over, s.KneeRate, s.KneeRateLo, s.KneeRateHi
			if k.KneeRateLo == 0 && k.KneeRateHi == 0 {
				k.KneeRateLo, k.KneeRateHi = s.KneeRate, s.KneeRate
			}
		}
		h.Knees = append(h.Knees, k)
	}
	slices.SortFunc(h.Knees, func(a, b Knee) int { return strings.Compare(a.Cell, b.Cell) })
	return h
}
