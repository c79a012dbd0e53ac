package baseline

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/goccy/go-yaml"

	"github.com/perfdag/perfdag/schema"
)

// NoteDecided marks a row whose verdict is the current point's decision against this
// baseline (decide: baseline): measured until the change was known inside or beyond its
// tolerance, at 95 % over every look (docs/schedule.md).
const (
	NoteDecidedInside = "decided inside the tolerance at 95 %"
	NoteDecidedBeyond = "decided beyond the tolerance at 95 %"
)

// DecidesAgainstBaseline reports whether a campaign has a cell whose points decide against
// its baseline (requests_per_point {auto: {decide: baseline}}).
func DecidesAgainstBaseline(c *schema.Campaign) bool {
	for _, cell := range c.Cells {
		if a := cell.RequestsPerPoint.Auto; a != nil && a.Decide == schema.DecideBaseline {
			return true
		}
	}
	return false
}

// Ref resolves what a campaign's decide: baseline points decide against: for the cell a diff
// of the campaign against e compares (e's cell when the campaign has it, else its only cell),
// per concurrency of the snapshot, every per-concurrency metric the diff judges with an
// interval on the baseline's side (value, 95 % half-width, tolerance under tol, unit,
// direction) and the failed-request count. A metric without an interval is left out: the
// diff cannot tell its change from noise either, and judges it as it judges any point's.
func Ref(e *Entry, spec *schema.Campaign, tol Tolerances) (*schema.BaselineRef, error) {
	var cell *schema.Cell
	for i := range spec.Cells {
		if spec.Cells[i].ID == e.Meta.Cell {
			cell = &spec.Cells[i]
		}
	}
	if cell == nil && len(spec.Cells) == 1 {
		cell = &spec.Cells[0]
	}
	if cell == nil {
		return nil, fmt.Errorf("baseline %s is of cell %q, which campaign %s does not have, and the campaign has %d cells: a diff could not choose one", e.Meta.Measurement, e.Meta.Cell, spec.Campaign, len(spec.Cells))
	}
	sloDiffers := e.Doc.SLO == nil || cell.SLO == nil || e.Doc.SLO.String() != cell.SLO.String()
	ref := &schema.BaselineRef{Name: e.Meta.Measurement, SHA256: e.Meta.SHA256, Cell: cell.ID, Points: map[string]map[string]schema.BaselineRefValue{}}
	for key, p := range e.Doc.Metrics {
		values := map[string]schema.BaselineRefValue{}
		for _, r := range rules[:pointRules] {
			v := pointValue(&p, r.Metric)
			if v == nil || !finite(*v) || (sloMetric(r.Metric) && sloDiffers) {
				continue
			}
			rv := schema.BaselineRefValue{Value: *v, Tolerance: tol.For(r.Metric), Unit: r.Unit, Direction: r.Direction}
			if r.Metric != "errors" {
				iv := usable(p.Intervals, r.Metric)
				if iv == nil {
					continue
				}
				rv.HalfWidth = iv.HalfWidth()
			}
			values[r.Metric] = rv
		}
		if len(values) > 0 {
			ref.Points[key] = values
		}
	}
	return ref, nil
}

// RefEdit is the scheduler's edit of a campaign file before a run (campaign.RunOptions.Edit):
// a campaign with decide: baseline points and no baseline_ref of its own gets the latest
// snapshot of name in registry as its baseline_ref; without such points, or before any
// baseline of that name is recorded, the file runs as written.
func RefEdit(registry, name string, tol Tolerances) func([]byte, *schema.Campaign) ([]byte, error) {
	return func(src []byte, spec *schema.Campaign) ([]byte, error) {
		if name == "" || spec.BaselineRef != nil || !DecidesAgainstBaseline(spec) {
			return src, nil
		}
		e, err := Resolve(registry, name)
		var nf *NotFoundError
		switch {
		case errors.As(err, &nf):
			return src, nil
		case err != nil:
			return nil, err
		}
		ref, err := Ref(e, spec, tol)
		if err != nil {
			return nil, err
		}
		return WithRef(src, ref)
	}
}

// WithRef appends ref to a campaign file's text as its baseline_ref: block, with a comment
// saying where it came from; the file's own lines keep their numbers.
func WithRef(src []byte, ref *schema.BaselineRef) ([]byte, error) {
	b, err := yaml.MarshalWithOptions(map[string]any{"baseline_ref": ref}, yaml.Indent(2))
	if err != nil {
		return nil, fmt.Errorf("encode baseline_ref: %w", err)
	}
	out := append([]byte{}, src...)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	out = fmt.Appendf(out, "# baseline_ref: written by perfdag schedule from baseline %s (sha256 %s); decide: baseline points decide against it\n", ref.Name, ref.SHA256)
	return append(out, b...), nil
}

// decidedRows gives each per-concurrency row the verdict of the current point's decision
// against this baseline: a clause on the row's metric whose threshold is the baseline's value
// moved by the row's tolerance (so it decided against these values, not another baseline's)
// holds → GREEN, fails → RED; an unknown clause leaves the row to the diff's own rule.
func decidedRows(rows []schema.DiffRow, base, cur *schema.PerfBench) {
	for i := range rows {
		r := &rows[i]
		if r.Concurrency == 0 || r.Baseline == nil {
			continue
		}
		key := r.Load
		if key == "" {
			key = strconv.Itoa(r.Concurrency)
		}
		p, ok := cur.Metrics[key]
		if !ok || p.Decision == nil || p.Decision.Reference == "" {
			continue
		}
		want := decidedLimit(*r.Baseline, r.Tolerance, r.Unit, r.Direction)
		for _, cl := range p.Decision.Clauses {
			got := cl.Threshold
			if r.Metric == "slo_attainment_pct" {
				got *= 100
			}
			if cl.Baseline != r.Metric || math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
				continue
			}
			switch cl.Verdict {
			case schema.ClauseHolds:
				r.Verdict, r.Note = Green, NoteDecidedInside+" ("+cl.Clause+")"
			case schema.ClauseFails:
				r.Verdict, r.Note = Red, NoteDecidedBeyond+" ("+cl.Clause+")"
			}
		}
	}
}

// decidedLimit is the value a metric may reach before its change is beyond the tolerance.
func decidedLimit(b, tol float64, unit, direction string) float64 {
	sign := -1.0
	if direction == HigherIsWorse {
		sign = 1
	}
	if unit == UnitPercent {
		return b * (1 + sign*tol/100)
	}
	return b + sign*tol
}
