package history

import (
	"github.com/perfdag/perfdag/schema"
)

// Key names one series of a history: a cell, a load ("" for the knee) and a metric.
type Key struct{ Cell, Load, Metric string }

// diffMetric is the baseline diff's name of each history metric and the factor that turns
// the diff's value into the history's unit (attainment is a percentage in the diff, a
// fraction in the history).
var diffMetric = map[string]struct {
	name  string
	scale float64
}{
	"output_tok_s": {"throughput_toks_per_s", 1}, "ttft_p50_ms": {"ttft_p50_ms", 1}, "ttft_p95_ms": {"ttft_p95_ms", 1},
	"itl_p50_ms": {"itl_p50_ms", 1}, "goodput_req_s": {"goodput_req_s", 1}, "slo_attainment": {"slo_attainment_pct", 0.01},
	KneeMetric: {"slo_knee_concurrency", 1}, KneeRateMetric: {"slo_knee_rate", 1},
}

// BaselineValues are the values the registered baseline held for a judged run, by the
// history's series: what the run's verdict.json diff rows give as each point's baseline (the
// cell the diff compared, every load it holds, the knee from its sweep-wide row). A trend chart
// draws them as the reference each run was judged against; empty when the run had no diff.
func BaselineValues(v *schema.Verdict) map[Key]float64 {
	out := map[Key]float64{}
	if v == nil || v.Diff == nil {
		return out
	}
	byName := map[string]string{}
	for m, d := range diffMetric {
		byName[d.name] = m
	}
	for _, r := range v.Diff.Rows {
		m, ok := byName[r.Metric]
		if !ok || r.Baseline == nil {
			continue
		}
		load := r.Load
		switch {
		case m == KneeMetric || m == KneeRateMetric:
			load = ""
		case load == "" && r.Concurrency > 0:
			load = schema.Conc(r.Concurrency).Key()
		case load == "":
			continue // a sweep-wide row of a point metric
		}
		out[Key{v.Diff.CurrentCell, load, m}] = *r.Baseline * diffMetric[m].scale
	}
	return out
}
