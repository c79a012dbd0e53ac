package promscrape

import (
	"math"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// candidates lists the family names one alias may be exposed under: the name as given, then with
// `_total` added or removed (prometheus_client declares counters without it and exposes them with
// it). `_created` companions are never candidates, so they never enter a sum or a delta.
func candidates(alias string) []string {
	if base, ok := strings.CutSuffix(alias, "_total"); ok {
		return []string{alias, base}
	}
	return []string{alias, alias + "_total"}
}

// Family returns the first family among the ordered aliases that holds at least one series, and
// the name it was found under; nil and "" when none is exported.
func (s *Scrape) Family(aliases ...string) (*dto.MetricFamily, string) {
	if s == nil {
		return nil, ""
	}
	for _, a := range aliases {
		for _, n := range candidates(a) {
			if f, ok := s.Families[n]; ok && len(f.GetMetric()) > 0 {
				return f, n
			}
		}
	}
	return nil, ""
}

// Value reads one series' scalar whatever its declared type (counter, gauge or untyped, since
// families without `# TYPE` parse as untyped); NaN, infinities, histograms and summaries are not values.
func Value(m *dto.Metric) (float64, bool) {
	var v float64
	switch {
	case m.GetCounter() != nil:
		v = m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		v = m.GetGauge().GetValue()
	case m.GetUntyped() != nil:
		v = m.GetUntyped().GetValue()
	default:
		return 0, false
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// LabelKey identifies a series within its family by its sorted label pairs, so the same series
// is matched across two scrapes whatever order the exporter printed the labels in.
func LabelKey(m *dto.Metric) string {
	pairs := make([]string, 0, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		pairs = append(pairs, l.GetName()+"="+l.GetValue())
	}
	sort.Strings(pairs)
	return strings.Join(pairs, "\x00")
}

// Label returns the first non-empty value among the named labels of a series (e.g. "Hostname",
// "hostname"), or "".
func Label(m *dto.Metric, names ...string) string {
	for _, n := range names {
		for _, l := range m.GetLabel() {
			if l.GetName() == n && l.GetValue() != "" {
				return l.GetValue()
			}
		}
	}
	return ""
}

// Series returns the values of the first exported family among aliases by LabelKey, and the
// family name; ok is false when no alias is exported (absent is not zero).
func (s *Scrape) Series(aliases ...string) (vals map[string]float64, name string, ok bool) {
	f, name := s.Family(aliases...)
	if f == nil {
		return nil, "", false
	}
	vals = make(map[string]float64, len(f.GetMetric()))
	for _, m := range f.GetMetric() {
		if v, ok := Value(m); ok {
			vals[LabelKey(m)] = v
		}
	}
	return vals, name, len(vals) > 0
}

// Sum adds the first exported alias over its label sets (engines under data parallel, finish
// reasons, ...); ok is false when none is exported.
func (s *Scrape) Sum(aliases ...string) (float64, bool) {
	vals, _, ok := s.Series(aliases...)
	sum := 0.0
	for _, v := range vals {
		sum += v
	}
	return sum, ok
}

// Max is the largest value over the label sets of the first exported alias (the busiest engine's
// KV usage, for instance); ok is false when none is exported.
func (s *Scrape) Max(aliases ...string) (float64, bool) {
	vals, _, ok := s.Series(aliases...)
	m := math.Inf(-1)
	for _, v := range vals {
		m = math.Max(m, v)
	}
	return m, ok
}

// Mean averages the first exported alias over its label sets (a gauge every rank reports);
// ok is false when none is exported.
func (s *Scrape) Mean(aliases ...string) (float64, bool) {
	vals, _, ok := s.Series(aliases...)
	sum := 0.0
	for _, v := range vals {
		sum += v
	}
	if !ok {
		return 0, false
	}
	return sum / float64(len(vals)), true
}

// Delta is a counter's increase from before to after, summed over series. Each series is diffed
// on its own; a decrease means the server restarted (a reset), so the after value is the whole
// increase, and a series the before scrape lacked started from zero. ok is false when after does
// not export the counter or before is missing: absent is not zero.
func Delta(before, after *Scrape, aliases ...string) (float64, bool) {
	if before == nil || after == nil {
		return 0, false
	}
	now, name, ok := after.Series(aliases...)
	if !ok {
		return 0, false
	}
	prev, _, _ := before.Series(name)
	d := 0.0
	for k, v := range now {
		p, seen := prev[k]
		switch {
		case !seen:
			d += v
		case v >= p:
			d += v - p
		default: // reset
			d += v
		}
	}
	return d, true
}
