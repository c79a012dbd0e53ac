package schema

import (
	"fmt"
	"strconv"
)

// MeasurementCost is what measuring one point took: the requests it sent and the time it held
// the endpoint, in GPU-seconds when the campaign declares how many GPUs serve the endpoint. A
// reused point keeps the cost it had when it was measured (its point.json is not rewritten).
type MeasurementCost struct {
	RequestsSent  int `json:"requests_sent"`  // warm-up and measured requests sent
	RequestsValid int `json:"requests_valid"` // of which answered validly (the statistics' requests)
	// SettleS is the settle pause before the point (its settle node's wall time); RunS the run's
	// own wall time (preflight, warm-up, the measured requests, their records and statistics).
	SettleS float64 `json:"settle_s"`
	RunS    float64 `json:"run_s"`
	// EndpointS is SettleS + RunS: how long the endpoint was held for the point.
	EndpointS float64 `json:"endpoint_s"`
	// GPUs is the GPU count the campaign declares for the cell (gpus, else tensor_parallel);
	// 0 when it declares none, and then GPUSeconds is unknown (null), never assumed.
	GPUs       int      `json:"gpus,omitempty"`
	GPUSeconds *float64 `json:"gpu_s"` // EndpointS × GPUs
}

// NewMeasurementCost is the cost of a point that sent sent requests (valid of them valid),
// held the endpoint settle + run seconds, on gpus declared GPUs (0: not declared).
func NewMeasurementCost(sent, valid int, settleS, runS float64, gpus int) *MeasurementCost {
	c := &MeasurementCost{RequestsSent: sent, RequestsValid: valid, SettleS: settleS, RunS: runS, EndpointS: settleS + runS, GPUs: gpus}
	if gpus > 0 {
		g := c.EndpointS * float64(gpus)
		c.GPUSeconds = &g
	}
	return c
}

// CostTotal sums the measurement cost of points: a cell's, or a campaign's.
type CostTotal struct {
	Points        int     `json:"points"` // measured points summed (imported ones are not measured)
	RequestsSent  int     `json:"requests_sent"`
	RequestsValid int     `json:"requests_valid"`
	EndpointS     float64 `json:"endpoint_s"`
	// GPUSeconds sums the points' GPU-seconds; null when some point's GPU count is unknown
	// (GPUsUnknown says how many) — a partial sum would understate what was spent.
	GPUSeconds  *float64 `json:"gpu_s"`
	GPUsUnknown int      `json:"gpus_unknown,omitempty"`
	// Unrecorded counts measured points whose point.json predates cost accounting: their cost
	// is not in the sums.
	Unrecorded int `json:"unrecorded,omitempty"`
}

// Add counts one measured point's cost (nil: measured before cost was recorded).
func (t *CostTotal) Add(c *MeasurementCost) {
	known := t.GPUsUnknown == 0 && t.Unrecorded == 0
	sum := 0.0
	if t.GPUSeconds != nil {
		sum = *t.GPUSeconds
	}
	if c == nil {
		t.Unrecorded++
	} else {
		t.Points++
		t.RequestsSent += c.RequestsSent
		t.RequestsValid += c.RequestsValid
		t.EndpointS += c.EndpointS
		if c.GPUSeconds == nil {
			t.GPUsUnknown++
		} else {
			sum += *c.GPUSeconds
		}
	}
	t.GPUSeconds = nil
	if known && t.GPUsUnknown == 0 && t.Unrecorded == 0 {
		t.GPUSeconds = &sum
	}
}

// GPUHours is GPUSeconds in hours, nil when unknown.
func (t CostTotal) GPUHours() *float64 {
	if t.GPUSeconds == nil {
		return nil
	}
	h := *t.GPUSeconds / 3600
	return &h
}

// FixedSweepCost estimates what measuring every concurrency of a search's range would have
// cost, at the per-point cost model the probes measured, so a reader sees what the search saved.
type FixedSweepCost struct {
	From int `json:"from"`
	To   int `json:"to"`
	Step int `json:"step"` // the search's resolution: the sweep's spacing
	// FromRate, ToRate and ResolutionPct are a rate search's grid (From, To, Step are then 0):
	// the fixed sweep measures every rate of it (schema.Search.RateGrid).
	FromRate      float64  `json:"from_rate,omitempty"`
	ToRate        float64  `json:"to_rate,omitempty"`
	ResolutionPct float64  `json:"resolution_pct,omitempty"`
	Points        int      `json:"points"` // concurrencies the sweep would measure
	Requests      int      `json:"requests_sent"`
	EndpointS     float64  `json:"endpoint_s"`
	GPUSeconds    *float64 `json:"gpu_s"` // null when the GPU count is not declared
	// Basis says how the estimate was made (the request rule, how seconds were interpolated).
	Basis string `json:"basis"`
}

// Range writes the fixed sweep's points: "c1..c64", "c1..c1024 every 16", or a rate search's
// grid "r1..r100 every 2 %".
func (f *FixedSweepCost) Range() string {
	switch {
	case f.ToRate > 0:
		return fmt.Sprintf("r%s..r%s every %s %%", FormatRate(f.FromRate), FormatRate(f.ToRate), strconv.FormatFloat(f.ResolutionPct, 'f', -1, 64))
	case f.Step > 1:
		return fmt.Sprintf("c%d..c%d every %d", f.From, f.To, f.Step)
	}
	return fmt.Sprintf("c%d..c%d", f.From, f.To)
}

// CellCost is one cell's measurement cost: the sum over its measured points.
type CellCost struct {
	Cell string `json:"cell"`
	CostTotal
}

// CampaignCost is what measuring a campaign took: its total (the sum over every measured
// point) and each cell's. Settle-discipline requests (prewarm, burn-in) are not in it.
type CampaignCost struct {
	Total CostTotal  `json:"total"`
	Cells []CellCost `json:"cells"`
}
