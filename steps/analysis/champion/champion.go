// Package champion picks what to ship: it ranks a campaign's arms — cells tagged with arm (and
// engine), one arm marked baseline — under a focus metric at the best point meeting a TPOT SLO,
// summarizes each on the rigor ladder, and writes champion.json with a recommendation that
// names the one delivery it is evidence for.
//
// The rigor ladder (sol_rigor) says what a number stands on:
//
//	L1  throughput only: client-side tokens/s and latencies, no GPU telemetry.
//	L2  DCGM duty-cycle proxy: SM / tensor / DRAM activity ratios were captured, but not
//	    grounded to the bench window's bytes (e.g. a node-level mean).
//	L3  byte-grounded DCGM: DCGM captured concurrently with each point's window and joined
//	    to it (dcgm_grounded), or a roofline import's per-(c, ISL) in-pod means.
//	L4  kernel-level profile: L3 plus an Nsight Compute / Nsight Systems profile of the point
//	    (a cell whose extra carries kernel_profile, or whose DCGM correlation says L4).
//
// A result is evidence for the delivery it was measured on and for no other: an overlay or an
// offline-prepped run is not evidence for an infr-patch even if the kernels match.
package champion

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/perfdag/perfdag/schema"
)

// Defaults of champion selection.
const (
	DefaultFocusMetric = "output_tok_s_per_gpu"
	DefaultTPOTSLOMs   = 50.0
	DefaultTopX        = 3
)

// Metrics are the focus metrics an arm can be ranked by; higher is better for all of them.
var metrics = map[string]func(*schema.AtlasRow) *float64{
	"output_tok_s_per_gpu": func(r *schema.AtlasRow) *float64 { return r.OutputTokPerSPerGPU },
	"total_tok_s_per_gpu":  func(r *schema.AtlasRow) *float64 { return r.TotalTokPerSPerGPU },
	"output_tok_s":         func(r *schema.AtlasRow) *float64 { return r.OutputTokPerS },
	"request_throughput":   func(r *schema.AtlasRow) *float64 { return r.RequestThroughput },
	"tok_s_per_user":       func(r *schema.AtlasRow) *float64 { return r.TokPerSPerUser },
	"tokens_per_watt":      func(r *schema.AtlasRow) *float64 { return r.TokensPerWatt },
	"aa_output_speed":      func(r *schema.AtlasRow) *float64 { return r.AAOutputSpeed },
	"goodput_req_s":        func(r *schema.AtlasRow) *float64 { return r.GoodputReqS },
	"goodput_req_s_per_gpu": func(r *schema.AtlasRow) *float64 {
		if r.GoodputReqS == nil || r.GPUs <= 0 {
			return nil
		}
		v := *r.GoodputReqS / float64(r.GPUs)
		return &v
	},
}

// DefaultGoodputMetric is the focus metric when the arms' cells declare a per-request slo:
// requests per second and GPU that met every target, so arms on more GPUs gain nothing by it.
const DefaultGoodputMetric = "goodput_req_s_per_gpu"

// Goodput reports whether a focus metric counts good requests (goodput_req_s, per GPU): the
// per-request SLO is inside the number, so the TPOT SLO does not filter its points.
func Goodput(metric string) bool { return strings.HasPrefix(metric, "goodput_req_s") }

// FocusMetrics lists the metric names Options.FocusMetric accepts.
func FocusMetrics() []string { return slices.Sorted(maps.Keys(metrics)) }

// Options tune the selection; zero values take the defaults.
type Options struct {
	FocusMetric string  // atlas field to maximise (FocusMetrics)
	TPOTSLOMs   float64 // a point counts only when its TPOT (ITL avg) is at or under this
	TopX        int     // variant arms reported beside the baseline
	// SLO is the per-request slo every arm's cells declare (ArmsSLO): the focus metric then
	// defaults to DefaultGoodputMetric, and a goodput focus metric ranks every point by the
	// requests that met it instead of filtering points by their mean TPOT.
	SLO *schema.SLO
}

func (o Options) withDefaults() (Options, error) {
	def := DefaultFocusMetric
	if o.SLO != nil {
		def = DefaultGoodputMetric
	}
	o.FocusMetric = cmp.Or(o.FocusMetric, def)
	if _, ok := metrics[o.FocusMetric]; !ok {
		return o, fmt.Errorf("champion: focus metric %q: want one of %s", o.FocusMetric, strings.Join(FocusMetrics(), ", "))
	}
	if o.TPOTSLOMs <= 0 {
		o.TPOTSLOMs = DefaultTPOTSLOMs
	}
	if o.TopX <= 0 {
		o.TopX = DefaultTopX
	}
	return o, nil
}

// armAcc is one arm's running state: counts and its best qualifying row, never all rows.
type armAcc struct {
	name       string
	engines    map[string]bool
	versions   map[string]bool
	deliveries map[string]bool
	baseline   bool
	cells      map[string]bool
	points     int
	meet       int
	grounded   int
	best       *bestPoint
}

// bestPoint is what an arm's summary needs of its best qualifying row, copied out of it.
type bestPoint struct {
	cell, delivery, engine, version, rigor string
	conc                                   int
	value                                  float64
	tpot, ttft, outPerGPU                  *float64
	goodput, attainment                    *float64
	focusIv                                *schema.Interval
	grounded, kernelProfile                bool
}

// Selector ranks arms from atlas rows streamed one at a time.
type Selector struct {
	campaign string
	opt      Options
	metric   func(*schema.AtlasRow) *float64
	arms     map[string]*armAcc
}

// NewSelector starts a selection for a campaign; a bad focus metric is an error.
func NewSelector(campaign string, opt Options) (*Selector, error) {
	o, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Selector{campaign: campaign, opt: o, metric: metrics[o.FocusMetric], arms: map[string]*armAcc{}}, nil
}

// Add folds one atlas row in: rows without an arm or not plot-ready are ignored. It fits
// atlas.AggregateDir's observe signature and never fails. The row is copied.
func (s *Selector) Add(r *schema.AtlasRow) error {
	if r.Arm == "" || !r.PlotReady {
		return nil
	}
	a := s.arms[r.Arm]
	if a == nil {
		a = &armAcc{name: r.Arm, engines: map[string]bool{}, versions: map[string]bool{}, deliveries: map[string]bool{}, cells: map[string]bool{}}
		s.arms[r.Arm] = a
	}
	a.engines[r.Engine], a.versions[r.EngineVersion], a.deliveries[r.Delivery], a.cells[r.CellID] = true, true, true, true
	a.baseline = a.baseline || r.Baseline
	a.points++
	if r.DCGMGrounded {
		a.grounded++
	}
	v := s.metric(r)
	if Goodput(s.opt.FocusMetric) {
		// the per-request SLO is inside goodput: a point meets it when some request did
		if v == nil || *v <= 0 {
			return nil
		}
		a.meet++
	} else {
		if r.ITLAvgMs == nil || *r.ITLAvgMs > s.opt.TPOTSLOMs {
			return nil
		}
		a.meet++
		if v == nil {
			return nil
		}
	}
	if a.best != nil && (*v < a.best.value || (*v == a.best.value &&
		cmp.Or(cmp.Compare(r.CellID, a.best.cell), cmp.Compare(r.Concurrency, a.best.conc)) >= 0)) {
		return nil
	}
	_, kp := r.Extra["kernel_profile"]
	a.best = &bestPoint{
		cell: r.CellID, delivery: r.Delivery, engine: r.Engine, version: r.EngineVersion, rigor: r.SolRigor,
		conc: r.Concurrency, value: *v, tpot: clone(r.ITLAvgMs), ttft: clone(r.TTFTAvgMs),
		outPerGPU: clone(r.OutputTokPerSPerGPU), focusIv: FocusInterval(s.opt.FocusMetric, r),
		goodput: clone(r.GoodputReqS), attainment: clone(r.SLOAttainment),
		grounded: r.DCGMGrounded, kernelProfile: kp,
	}
	return nil
}

func clone(p *float64) *float64 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// ArmsSLO is the per-request slo every arm-tagged cell declares, so arms are ranked by goodput
// under one set of targets; nil when no arm's cell declares one, or — with a note saying so, for
// champion.json's warnings — when some do not or they differ (goodput under other targets is
// another number: the arms are then ranked under the TPOT SLO as without slo).
func ArmsSLO(cells []schema.Cell) (*schema.SLO, string) {
	var slo *schema.SLO
	with, without := []string{}, []string{}
	differ := false
	for i := range cells {
		c := &cells[i]
		if c.Arm == "" {
			continue
		}
		if c.SLO == nil {
			without = append(without, c.ID)
			continue
		}
		with = append(with, c.ID)
		if slo == nil {
			slo = c.SLO
		} else if slo.String() != c.SLO.String() {
			differ = true
		}
	}
	switch {
	case len(with) == 0:
		return nil, ""
	case len(without) > 0:
		return nil, fmt.Sprintf("cells %s declare a per-request slo and cells %s do not: arms are ranked under the TPOT SLO, not by goodput", strings.Join(with, ", "), strings.Join(without, ", "))
	case differ:
		return nil, "the arms' cells declare different per-request slo targets: arms are ranked under the TPOT SLO, not by goodput (goodput under other targets is another number)"
	}
	return slo, ""
}
