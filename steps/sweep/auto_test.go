package sweep

import (
	"slices"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

func autoCell(maxInFlight int, a schema.AutoSweep) *schema.Cell {
	return &schema.Cell{ID: "range", MaxInFlight: maxInFlight, Sweep: schema.Sweep{Auto: &a}}
}

// measuredAt is a probe of load whose point served rps requests per second.
func measuredAt(l schema.Load, rps float64) judged {
	p := &campaigndir.PointResult{}
	p.Status, p.RequestCount, p.RequestThroughput, p.Load = "ok", 10, rps, l
	return judged{load: l, conc: l.InFlight(), point: p, met: true}
}

// sweep: auto asks for c1, then its saturating point, then every rate between their request
// throughputs at the cell's cap, then nothing: as many points as its bound.
func TestAutoNextSequence(t *testing.T) {
	cell := autoCell(64, schema.AutoSweep{Rates: 4})
	var ps []judged
	var asked [][]schema.Load
	for range 10 {
		next := autoNext(cell, ps)
		if len(next) == 0 {
			break
		}
		asked = append(asked, next)
		for _, l := range next {
			rps := 2.0
			if l == schema.Conc(64) {
				rps = 10
			}
			ps = append(ps, measuredAt(l, rps))
		}
	}
	want := [][]schema.Load{{schema.Conc(1)}, {schema.Conc(64)},
		{schema.RateAt(4, 64), schema.RateAt(6, 64), schema.RateAt(8, 64), schema.RateAt(10, 64)}}
	if !slices.EqualFunc(asked, want, slices.Equal) {
		t.Fatalf("asked %v, want %v", asked, want)
	}
	if len(ps) != Bound(cell) {
		t.Fatalf("%d points, bound %d", len(ps), Bound(cell))
	}
	r := &schema.SweepResult{Mode: schema.SweepAuto, Probes: make([]schema.SweepProbe, len(ps)), Auto: autoResult(cell, ps)}
	if got := autoLine(r); got != "c1 2 req/s, c64 10 req/s: 4 rates 4–10 req/s (6 points)" {
		t.Errorf("line %q", got)
	}
}

// Without max_in_flight the saturating point is c128 and the rates are uncapped; an anchor
// without a request throughput ends the sweep there, saying why.
func TestAutoNextAnchors(t *testing.T) {
	cell := autoCell(0, schema.AutoSweep{Rates: 2})
	if got := autoNext(cell, []judged{measuredAt(schema.Conc(1), 3)}); !slices.Equal(got, []schema.Load{schema.Conc(128)}) {
		t.Fatalf("after c1: %v, want c128", got)
	}
	got := autoNext(cell, []judged{measuredAt(schema.Conc(1), 3), measuredAt(schema.Conc(128), 30)})
	if want := []schema.Load{schema.RateAt(16.5, 0), schema.RateAt(30, 0)}; !slices.Equal(got, want) {
		t.Fatalf("rates %v, want %v", got, want)
	}
	failed := judged{load: schema.Conc(1), conc: 1, failed: "run-shape[range/c1]: connection refused"}
	if got := autoNext(cell, []judged{failed}); got != nil {
		t.Fatalf("after a failed c1: %v, want nothing", got)
	}
	if r := autoResult(cell, []judged{failed}); !strings.Contains(r.Unknown, "c1 has no point: run-shape[range/c1]: connection refused") || len(r.Rates) != 0 {
		t.Fatalf("result %+v", r)
	}
	none := measuredAt(schema.Conc(128), 0)
	none.point.RequestCount = 0
	if got := autoNext(cell, []judged{measuredAt(schema.Conc(1), 3), none}); got != nil {
		t.Fatalf("after a saturating point without valid requests: %v, want nothing", got)
	}
}
