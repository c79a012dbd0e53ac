// Package history reads a scheduled campaign's runs back as a history: each run's time,
// trigger, verdict and baseline, the knee of each searched cell with its band, the headline
// metrics of every point with their 95 % intervals and the versions the run recorded — and, per
// (cell, load, metric), the ordered series of values a trend chart or a change-point detector
// reads. The same history comes from the campaign directories a scheduler wrote (FromDirs) and
// from a lake they were published to (FromLake).
package history

import (
	"cmp"
	"slices"
	"strings"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/analysis/changepoint"
)

// Schema names the JSON document perfdag history --json prints.
const Schema = "perfdag_history_v1"

// Document is perfdag history --json: the history of each campaign read.
type Document struct {
	Schema    string     `json:"schema"` // perfdag_history_v1
	Source    string     `json:"source"` // the state directory, folder or lake (URL without its password) read
	Campaigns []*History `json:"campaigns"`
}

// History is one scheduled campaign's runs, oldest first, and its series.
type History struct {
	Campaign string   `json:"campaign"`
	Runs     []Run    `json:"runs"`
	Series   []Series `json:"series"`
}

// Run is one scheduled run: its history row (verdict, trigger, baseline, knees), what it ran
// against and the headline metrics of its points.
type Run struct {
	ID string `json:"id"` // the run's campaign id (<UTC-ts>-<slug>), its key in the lake
	schema.HistoryRow
	Versions Versions `json:"versions"`
	Points   []Point  `json:"points"`
	// Note says why a run has no points: its directory could not be read as a finished
	// campaign (a failed run), or the history line names no directory.
	Note  string `json:"note,omitempty"`
	Marks []Mark `json:"marks,omitempty"` // what annotators found at this run (change points)
}

// Versions are the commit and version fields the run recorded: the campaign's source: block,
// else the atlas rows' engine, engine_version and delivery (distinct, sorted, comma-joined, as
// campaign_v1 holds them), and the models its points measured.
type Versions struct {
	Engine        string   `json:"engine,omitempty"`
	EngineVersion string   `json:"engine_version,omitempty"`
	Commit        string   `json:"commit,omitempty"`
	Delivery      string   `json:"delivery,omitempty"`
	Models        []string `json:"models,omitempty"`
}

// Point is one measured (cell, load) of a run with its headline metrics by atlas field name.
type Point struct {
	Cell    string           `json:"cell"`
	Load    string           `json:"load"` // c16, r2.5-cap64
	Metrics map[string]Value `json:"metrics"`
}

// Value is a metric's estimate and, when the point carries one, its 95 % interval.
type Value struct {
	Value float64  `json:"value"`
	Lo    *float64 `json:"lo,omitempty"`
	Hi    *float64 `json:"hi,omitempty"`
}

// Series is one (cell, load, metric) over the runs that measured it, oldest first. A searched
// cell's knee is the series (cell, "", "knee") with its band as [lo, hi].
type Series struct {
	Cell   string        `json:"cell"`
	Load   string        `json:"load,omitempty"`
	Metric string        `json:"metric"`
	Points []SeriesPoint `json:"points"`
	Marks  []Mark        `json:"marks,omitempty"` // what annotators found in this series
}

// SeriesPoint is one run's value of a series.
type SeriesPoint struct {
	Run   string   `json:"run"`  // Run.ID
	Time  string   `json:"time"` // the run's start, RFC 3339 UTC
	Value float64  `json:"value"`
	Lo    *float64 `json:"lo,omitempty"`
	Hi    *float64 `json:"hi,omitempty"`
}

// Mark is something an annotator (a change-point detector) says about a series at a run: the
// seam where such findings join the history, its table and its JSON.
type Mark struct {
	Kind   string `json:"kind"`             // e.g. change_point
	Run    string `json:"run"`              // Run.ID where it starts
	Cell   string `json:"cell,omitempty"`   // with Load and Metric, the series
	Load   string `json:"load,omitempty"`   //
	Metric string `json:"metric,omitempty"` //
	Detail string `json:"detail"`           // in words, with its size and interval
	// Worse says the change is a regression of its metric (ChangePoints).
	Worse  bool                `json:"worse,omitempty"`
	Change *changepoint.Change `json:"change,omitempty"` // a change point's numbers
}

// Annotator adds marks to a built history (Series.Marks and Run.Marks).
type Annotator func(*History) error

// KneeMetric names a searched cell's knee series.
const KneeMetric = "knee"

// KneeRateMetric names the knee series of a cell searched over request rate (requests/s).
const KneeRateMetric = "knee_rate"

// Metrics are the headline metrics a history keeps, by atlas field name, in the order the
// table prints them: throughput, TTFT p50 and p95, ITL p50, and on a cell with slo: goodput
// and attainment (a fraction).
var Metrics = []string{"output_tok_s", "ttft_p50_ms", "ttft_p95_ms", "itl_p50_ms", "goodput_req_s", "slo_attainment"}

// pointOf takes a row's headline metrics with their intervals.
func pointOf(r *schema.AtlasRow) Point {
	p := Point{Cell: r.CellID, Load: r.PointLoad().Key(), Metrics: map[string]Value{}}
	vals := map[string]*float64{"output_tok_s": r.OutputTokPerS, "ttft_p50_ms": r.TTFTP50Ms, "ttft_p95_ms": r.TTFTP95Ms,
		"itl_p50_ms": r.ITLP50Ms, "goodput_req_s": r.GoodputReqS, "slo_attainment": r.SLOAttainment}
	for _, m := range Metrics {
		v := vals[m]
		if v == nil {
			continue
		}
		val := Value{Value: *v}
		if iv, ok := r.Intervals[m]; ok {
			lo, hi := iv.Lo, iv.Hi
			val.Lo, val.Hi = &lo, &hi
		}
		p.Metrics[m] = val
	}
	return p
}

// versionsOf is what a run recorded of its source: the source: block's fields over the atlas
// rows' distinct values, as campaign_v1 holds them.
func versionsOf(src *schema.Source, rows []schema.AtlasRow) Versions {
	distinct := func(f func(*schema.AtlasRow) string) string {
		var out []string
		for i := range rows {
			if s := f(&rows[i]); s != "" && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		slices.Sort(out)
		return strings.Join(out, ",")
	}
	v := Versions{Engine: distinct(func(r *schema.AtlasRow) string { return r.Engine }),
		EngineVersion: distinct(func(r *schema.AtlasRow) string { return r.EngineVersion }),
		Delivery:      distinct(func(r *schema.AtlasRow) string { return r.Delivery })}
	if src != nil {
		v.Engine, v.EngineVersion, v.Delivery = cmp.Or(src.Engine, v.Engine), cmp.Or(src.EngineVersion, v.EngineVersion), cmp.Or(src.Delivery, v.Delivery)
		v.Commit = src.Commit
	}
	if m := distinct(func(r *schema.AtlasRow) string { return r.Model }); m != "" {
		v.Models = strings.Split(m, ",")
	}
	return v
}

// newRun makes a run of its history row and atlas rows.
func newRun(id string, row schema.HistoryRow, v Versions, rows []schema.AtlasRow) Run {
	r := Run{ID: id, HistoryRow: row, Versions: v, Points: []Point{}}
	for i := range rows {
		if p := pointOf(&rows[i]); len(p.Metrics) > 0 {
			r.Points = append(r.Points, p)
		}
	}
	slices.SortStableFunc(r.Points, func(a, b Point) int {
		return cmp.Or(strings.Compare(a.Cell, b.Cell), compareLoads(a.Load, b.Load))
	})
	return r
}

func compareLoads(a, b string) int {
	la, errA := schema.ParseLoad(a)
	lb, errB := schema.ParseLoad(b)
	if errA != nil || errB != nil {
		return strings.Compare(a, b)
	}
	return la.Compare(lb)
}

// Build orders a campaign's runs by start (then id), makes its series and runs the annotators.
func Build(campaign string, runs []Run, annotate ...Annotator) (*History, error) {
	slices.SortStableFunc(runs, func(a, b Run) int { return cmp.Or(strings.Compare(a.Started, b.Started), strings.Compare(a.ID, b.ID)) })
	h := &History{Campaign: campaign, Runs: runs, Series: []Series{}}
	if h.Runs == nil {
		h.Runs = []Run{}
	}
	type key struct{ cell, load, metric string }
	at := map[key]int{}
	add := func(k key, sp SeriesPoint) {
		i, ok := at[k]
		if !ok {
			i = len(h.Series)
			at[k] = i
			h.Series = append(h.Series, Series{Cell: k.cell, Load: k.load, Metric: k.metric})
		}
		h.Series[i].Points = append(h.Series[i].Points, sp)
	}
	for _, r := range h.Runs {
		for _, k := range r.Knees {
			if k.Unknown != "" {
				continue
			}
			if k.Over == schema.SearchOverRate {
				lo, hi := k.KneeRateLo, k.KneeRateHi
				add(key{k.Cell, "", KneeRateMetric}, SeriesPoint{Run: r.ID, Time: r.Started, Value: k.KneeRate, Lo: &lo, Hi: &hi})
				continue
			}
			lo, hi := float64(k.KneeLo), float64(k.KneeHi)
			add(key{k.Cell, "", KneeMetric}, SeriesPoint{Run: r.ID, Time: r.Started, Value: float64(k.Knee), Lo: &lo, Hi: &hi})
		}
		for _, p := range r.Points {
			for _, m := range Metrics {
				if v, ok := p.Metrics[m]; ok {
					add(key{p.Cell, p.Load, m}, SeriesPoint{Run: r.ID, Time: r.Started, Value: v.Value, Lo: v.Lo, Hi: v.Hi})
				}
			}
		}
	}
	rank := func(m string) int {
		if m == KneeMetric || m == KneeRateMetric {
			return -1
		}
		return slices.Index(Metrics, m)
	}
	slices.SortStableFunc(h.Series, func(a, b Series) int {
		return cmp.Or(strings.Compare(a.Cell, b.Cell), compareLoads(a.Load, b.Load), cmp.Compare(rank(a.Metric), rank(b.Metric)))
	})
	for _, f := range annotate {
		if err := f(h); err != nil {
			return nil, err
		}
	}
	return h, nil
}
