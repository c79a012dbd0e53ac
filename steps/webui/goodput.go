package webui

import (
	"strconv"

	"github.com/perfdag/perfdag/schema"
)

// goodputView is a point's goodput as its page shows it: the counts, and each figure with its
// 95 % interval when the point has one.
type goodputView struct {
	G          *schema.Goodput
	Attainment string // percent, e.g. 99.5 %
	AttainIv   string // "98.9 % – 100 %", "" without an interval
	Goodput    string // req/s
	GoodputIv  string
	// The exact values, for the cells' titles.
	AttainExact, GoodputExact string
}

// goodputOf is nil when the point's cell declares no per-request slo.
func goodputOf(p *schema.Point) *goodputView {
	if p.Goodput == nil {
		return nil
	}
	g := &goodputView{G: p.Goodput, Attainment: "unknown", Goodput: "unknown"}
	if a := p.SLOAttainment; a != nil {
		g.Attainment, g.AttainExact = attained(*a), exact(*a)
		if iv, ok := p.Intervals["slo_attainment"]; ok {
			g.AttainIv = attained(iv.Lo) + " – " + attained(iv.Hi)
		}
	}
	if v := p.GoodputReqS; v != nil {
		g.Goodput, g.GoodputExact = fig(*v), exact(*v)
		if iv, ok := p.Intervals["goodput_req_s"]; ok {
			g.GoodputIv = fig(iv.Lo) + " – " + fig(iv.Hi)
		}
	}
	return g
}

// attained is a fraction as percent with as many decimals as it takes not to round a miss
// away (0.9996 is 99.96 %, never 100.0 %).
func attained(v float64) string {
	for prec := 1; prec < 4; prec++ {
		s := strconv.FormatFloat(100*v, 'f', prec, 64)
		if v >= 1 || s != strconv.FormatFloat(100, 'f', prec, 64) {
			return s + " %"
		}
	}
	return strconv.FormatFloat(100*v, 'f', 4, 64) + " %"
}

// anyGoodput reports whether a point of the table states goodput: the table then has its
// goodput and attainment columns.
func anyGoodput(rows []pointRow) bool {
	for _, r := range rows {
		if r.Point != nil && r.Point.Goodput != nil {
			return true
		}
	}
	return false
}
